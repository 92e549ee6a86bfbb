// How a worker reports a problem it carries on through: an `error` event
// when someone listens, otherwise a log line (src/carriedOn.ts: one line
// for what it expects and retries, a bug printed whole). Likewise a lease it
// lost (a `stale` event, or a line: the job was recovered and runs again
// under another lease, or an operator ended it, which an operator reading
// the log should be able to tell).
import type { EventEmitter } from 'node:events';
import { logCarriedOn } from '../carriedOn.js';
import { faultReporter, type FaultReporter } from '../faultSpell.js';
import type { ClaimedJob } from '../db/protocol.js';
import type { StaleLeaseError } from '../errors.js';
import type { WorkerEvents } from './workerTypes.js';

export function reportWorkerError(events: EventEmitter<WorkerEvents>, workerId: string, err: unknown, what?: string): void {
  if (events.listenerCount('error') > 0) {
    events.emit('error', err);
    return;
  }
  logCarriedOn(`[workhorse] worker ${workerId}:`, err, what);
}

/**
 * The fault reporter of a worker's loops (faultSpell.ts): every failure to
 * its `error` listeners when it has any, otherwise a line when a fault
 * begins and one when it ends, under the worker's prefix.
 */
export function workerFaultReporter(events: EventEmitter<WorkerEvents>, workerId: string): FaultReporter {
  return faultReporter(`[workhorse] worker ${workerId}:`, () => (events.listenerCount('error') > 0 ? (err: unknown) => events.emit('error', err) : undefined));
}

/**
 * A lost lease: the `stale` event, or with no listener one log line. When
 * the database refused the lease (not when it ran out unreached),
 * `readStatus` (the job's status now, read once) tells an operator's cancel
 * apart from the other causes before the line is written.
 */
export function reportStale(
  events: EventEmitter<WorkerEvents>,
  workerId: string,
  err: StaleLeaseError,
  job: ClaimedJob,
  readStatus?: () => Promise<string | undefined>,
  log: (line: string) => void = console.error,
): void {
  if (events.listenerCount('stale') > 0) {
    events.emit('stale', err, job);
    return;
  }
  if (!readStatus || err.expiredMs !== undefined) {
    log(staleLine(workerId, err, job));
    return;
  }
  void readStatus()
    .catch(() => undefined)
    .then((status) => log(staleLine(workerId, err, job, status)));
}

/** The log line of a lost lease; `status`, the job's status when it was read, names a cancel for what it is. */
export function staleLine(workerId: string, err: StaleLeaseError, job: ClaimedJob, status?: string): string {
  // The lease was recovered (the job runs again under a new one), lost with the database's lease table
  // (a crash or a failover empties it: the job is claimable at once), or the job was ended by an
  // operator (a cancel): either way, nothing this attempt writes counts. Or it ran out while the
  // database could not be reached: the job runs again once it can.
  const why =
    err.stalledMs !== undefined
      ? 'another worker may already be running the job (recovery takes a lease that ran out)'
      : err.expiredMs !== undefined
      ? 'the database could not be reached, and the job runs again once it can'
      : status === 'cancelled'
        ? 'an operator cancelled the job'
        : 'the job was recovered (it runs again under a new lease), the database lost its leases (a crash or failover), or an operator ended it (a cancel)';
  return `[workhorse] worker ${workerId}: job ${job.id} (${job.type}) lost its lease (${err.message}); what this attempt does is discarded: ${why}`;
}

/**
 * A handler that went on running after its attempt ended (its timeout, a
 * lost lease, a hard stop) because it ignored ctx.signal (it still ran
 * LINGER_GRACE_MS after the abort, invokeHandler.ts): one line, as it
 * holds a handler slot until it returns and may still have effects.
 */
export function reportLingering(
  workerId: string,
  job: ClaimedJob,
  reason: unknown,
  waitingOnDatabase: boolean,
  log: (line: string) => void = console.error,
): void {
  const why = reason instanceof Error ? reason.message : 'its attempt ended';
  // A handler awaiting its own context's call on a database that does not answer ignored nothing: that call ends within its bound.
  const because = waitingOnDatabase
    ? 'it waits on a call of its context (a step, progress, a wait or a spawn) the database has not answered yet, which fails within its bound'
    : 'it ignored ctx.signal';
  log(`[workhorse] worker ${workerId}: job ${job.id} (${job.type}) ended (${why}) but its handler is still running: ${because}; its handler slot stays taken until it returns`);
}

// Records a handler's outcome under the fence, through the batching settler:
// success completes the job; a failure retries with backoff (or the worker's
// retryDelayMs override) or ends it failed; a durable wait suspends it
// (waiting, lease released, no attempt counted). A lease already known lost,
// or a settlement the fence refuses, becomes a `stale` event and writes nothing.
import type { ClaimedJob } from '../db/protocol.js';
import { resultJson } from '../db/protocol.js';
import { isProgramLimitExceeded } from '../db/sqlState.js';
import { ConfigError, StaleLeaseError, ValidationError } from '../errors.js';
import { errorToJson, isRetryable, readableThrown } from '../errorJson.js';
import type { HandlerOutcome } from './invokeHandler.js';
import { MAX_RETRY_DELAY_MS, type RetryDelay } from './options.js';
import type { Settler } from './settler.js';
import { JobSuspension } from './suspension.js';

/** What happened to one job this worker ran. */
export type JobOutcome =
  | { job: ClaimedJob; status: 'succeeded'; result: unknown }
  | { job: ClaimedJob; status: 'retried' | 'failed'; error: unknown }
  /** A durable wait suspended it: waiting until runAt (or until what it waits for arrives), or ready at once. */
  | { job: ClaimedJob; status: 'suspended'; wait: string; runAt: Date }
  | { job: ClaimedJob; status: 'stale'; error: StaleLeaseError };

export interface SettleDeps {
  settler: Settler;
  retryDelayMs: RetryDelay | undefined;
  onStale(error: StaleLeaseError, job: ClaimedJob): void;
  onSettled(outcome: JobOutcome): void;
  /** An event listener or a retryDelayMs function threw. (A settlement write that gave up is reported by the settler, once per batch.) */
  onError(error: unknown): void;
}

/** Told once per settlement, after its events: what it became, or undefined when the write gave up. */
export type SettleFinished = (settled: JobOutcome | undefined) => void;

/**
 * Hands the outcome to the settler and calls `finished` exactly once, after
 * the write (or when the lease is known stale, or the write gave up). A
 * result JSON cannot hold (a BigInt, a cycle, a function) fails the job for
 * good with a ValidationError instead of poisoning the batch it would be
 * written in, and so does a result the database refuses to store (over
 * jsonb's 256 MiB string limit, say), which would otherwise come back
 * through lease recovery on every attempt. Nothing here throws: an
 * exception from an event listener or a retryDelayMs function goes to
 * `onError`. One closure per job (the settler's callback); the rest are
 * module functions.
 */
export function settleJob(
  job: ClaimedJob,
  outcome: HandlerOutcome,
  lost: { reason: unknown } | null,
  deps: SettleDeps,
  finished: SettleFinished,
): void {
  if (!outcome.ok) outcome = { ok: false, error: readableThrown(outcome.error) };
  if (lost) {
    const error = lost.reason instanceof StaleLeaseError ? lost.reason : new StaleLeaseError(job.id, job.execution, 'settle');
    conclude(deps, finished, { job, status: 'stale', error });
    return;
  }
  if (!outcome.ok && outcome.error instanceof JobSuspension) {
    const wait = outcome.error.wait;
    deps.settler.suspend({ id: job.id, execution: job.execution, wait }, (result, error) =>
      conclude(
        deps,
        finished,
        result && (result.accepted ? { job, status: 'suspended', wait, runAt: result.runAt! } : staleOf(job, `suspend on wait "${wait}"`)),
        error,
      ),
    );
    return;
  }
  // A returned Error (meant to be thrown: JSON would store it as {} and the job would succeed) fails the attempt as a
  // thrown one does, as a batch handler's Error outcome does.
  if (outcome.ok && outcome.value instanceof Error) {
    settleJob(job, { ok: false, error: outcome.value }, null, deps, finished);
    return;
  }
  if (outcome.ok) {
    let json: string;
    try {
      json = resultJson(outcome.value);
    } catch (err) {
      const error = new ValidationError(`the "${job.type}" handler returned a result that is not JSON PostgreSQL can store: ${(err as Error).message}`);
      settleJob(job, { ok: false, error: Object.assign(error, { retryable: false }) }, null, deps, finished);
      return;
    }
    deps.settler.complete({ id: job.id, execution: job.execution, resultJson: json }, (result, error) => {
      // The database refused the result itself (too large, a value it rejects): every attempt would
      // return it again, so the job fails for good now instead of going back through lease recovery.
      if (!result && refusedResult(error)) {
        const refused = new ValidationError(`the "${job.type}" handler returned a result the database cannot store (${json.length} characters of JSON): ${(error as Error).message}`);
        settleJob(job, { ok: false, error: Object.assign(refused, { retryable: false }) }, null, deps, finished);
        return true;
      }
      conclude(deps, finished, result && (result.accepted ? { job, status: 'succeeded', result: outcome.value } : staleOf(job, 'complete')), error);
    });
    return;
  }
  const final = !isRetryable(outcome.error);
  let retryDelayMs: number | null = null;
  // Asked only when a retry follows: not for a permanent error, nor for the last attempt.
  if (!final && job.attempt < job.maxAttempts) {
    try {
      retryDelayMs = retryDelayFor(deps.retryDelayMs, job);
    } catch (err) {
      deps.onError(err); // the job's own backoff applies
    }
  }
  const failure = { id: job.id, execution: job.execution, error: errorToJson(outcome.error), retryDelayMs, final };
  deps.settler.fail(failure, (result, error) =>
    conclude(
      deps,
      finished,
      result &&
        (result.accepted
          ? { job, status: result.status === 'ready' ? 'retried' : 'failed', error: outcome.error }
          : staleOf(job, 'fail')),
      error,
    ),
  );
}

/** A completion the database refused for its value: a data exception (mapped to ValidationError) or a program limit. */
function refusedResult(error: unknown): boolean {
  return error instanceof ValidationError || isProgramLimitExceeded(error);
}

function staleOf(job: ClaimedJob, what: string): JobOutcome {
  return { job, status: 'stale', error: new StaleLeaseError(job.id, job.execution, what) };
}

/** Reports a settlement, then calls `finished`. A write that gave up (`settled` undefined) the settler reports, once for its batch. */
function conclude(deps: SettleDeps, finished: SettleFinished, settled: JobOutcome | undefined, _error?: unknown): void {
  try {
    if (settled) {
      if (settled.status === 'stale') deps.onStale(settled.error, settled.job);
      deps.onSettled(settled);
    }
  } catch (err) {
    deps.onError(err);
  } finally {
    finished(settled);
  }
}

function retryDelayFor(o: RetryDelay | undefined, job: ClaimedJob): number | null {
  if (o === undefined) return null;
  if (typeof o === 'number') return o;
  const v = o(job.attempt, job);
  if (v === undefined) return null;
  // The settlement stores whole milliseconds in an integer column: anything else would fail its write.
  if (typeof v !== 'number' || Number.isNaN(v) || v > MAX_RETRY_DELAY_MS) {
    throw new ConfigError(
      `retryDelayMs(attempt, job) answered ${String(v)} for job ${job.id}: expected milliseconds from 0 to ${MAX_RETRY_DELAY_MS}, or undefined; the job's own backoff applies`,
    );
  }
  return Math.max(0, Math.round(v));
}

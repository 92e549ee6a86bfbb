// When a claim's answer is too late to start its jobs. The database stamps
// a claimed lease when the claim runs, which may be as early as when it was
// sent; an answer the network held back (a frozen socket that thawed) can
// arrive with those leases about to run out, or already run out, unseen by
// any heartbeat. Starting their handlers then is a race the worker loses:
// the watchdog aborts them, the leases expire with their handlers marked
// started, and recovery counts an attempt for work that never ran. Such a
// claim's jobs are handed back at once, unstarted (release_unstarted_v1: no
// attempt counted, ledger outcome `released`), and claimed again. Only if
// that call fails too is the claim treated as one whose answer was lost:
// the next heartbeat releases the leases the worker does not hold.
import type { ClaimedJob, Protocol, Queryable } from '../db/protocol.js';
import { ClaimAnsweredLateError } from '../errors.js';
import type { Lease, LeaseTable } from './leaseTable.js';

/**
 * True when a claim sent at `sentAt` (Date.now()) is answered too late to
 * start its jobs: after half a lease, when the leases may have less than two
 * heartbeats left (a beat may be in flight, and the next one an interval away).
 */
export function answeredTooLate(sentAt: number, leaseMs: number, now: number = Date.now()): boolean {
  return now - sentAt > leaseMs / 2;
}

export interface LateClaimDeps {
  protocol: Protocol;
  db: Queryable;
  namespace: string;
  workerId: string;
  leaseMs: number;
  table: LeaseTable;
  /** Gives up a lease this worker held under an older execution of a job the claim took again. */
  supersede(old: Lease): void;
  /** The hand-back failed: the next heartbeat must release what the claim leased. */
  unreleased(sentAt: number): void;
  emitError(err: unknown): void;
}

/** Hands the late claim's jobs back unstarted; never throws. */
export async function handBackLateClaim(d: LateClaimDeps, jobs: ClaimedJob[], sentAt: number): Promise<void> {
  for (const job of jobs) {
    const old = d.table.get(job.id);
    if (old) {
      d.table.remove(old);
      d.supersede(old);
    }
  }
  d.emitError(new ClaimAnsweredLateError(Date.now() - sentAt, d.leaseMs, jobs.length));
  try {
    await d.protocol.releaseUnstarted(d.db, d.namespace, d.workerId, jobs.map((j) => ({ id: j.id, execution: j.execution })));
  } catch {
    d.unreleased(sentAt);
  }
}

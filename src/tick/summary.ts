// What a tick returns: counts gathered from the worker's events (suspended
// jobs included) plus the
// start's recovery count, the slots fired, the ticks fanned out, and the due
// jobs it left because they cannot finish in its time (so `claimed: 0` is
// never a mystery).
import type { TickSkip } from '../db/protocol.js';
import type { JobOutcome } from '../worker/worker.js';
import type { WorkerBase } from '../worker/workerBase.js';

/** Per job type: due jobs a tick left because they cannot finish in its time. */
export type SkippedByType = Record<string, Omit<TickSkip, 'type'>>;

export interface TickSummary {
  /** Jobs this tick claimed. */
  claimed: number;
  succeeded: number;
  failed: number;
  /** Failed attempts that will run again (backoff), including handlers aborted at the deadline. */
  retried: number;
  /** Jobs a durable wait suspended (sleeping or waiting for a signal, a decision or children): they cost the tick nothing more. */
  suspended: number;
  /**
   * Claimed jobs whose lease ended under the tick (an operator's cancel, a
   * recovery after a stall): what their attempt did was discarded, and
   * claimed = succeeded + failed + retried + suspended + lost.
   */
  lost: number;
  /** Expired leases the tick's recovery passes returned to ready (or failed): its start's, and its heartbeats'. */
  recovered: number;
  /** Jobs the due recurring slots enqueued. */
  slotsFired: number;
  /** Further ticks invoked asynchronously. */
  fannedOut: number;
  /**
   * Due jobs this tick left because they cannot finish in its claim window:
   * a timeoutMs longer than the window, or no timeoutMs and an earlier
   * tick's deadline already cut off a run that long. Counted at the start
   * among up to 1,000 due jobs.
   */
  skippedTimeout: number;
  /** The same, per job type, when asked for (skipsByType). */
  skippedByType?: SkippedByType;
  /** Milliseconds left before the deadline when the tick returned. */
  msLeft: number;
}

export function emptySummary(): TickSummary {
  return { claimed: 0, succeeded: 0, failed: 0, retried: 0, suspended: 0, lost: 0, recovered: 0, slotsFired: 0, fannedOut: 0, skippedTimeout: 0, msLeft: 0 };
}

/** Writes the start's skip counts on `summary`; per type only when asked for. */
export function countSkips(summary: TickSummary, skips: TickSkip[], byType: boolean): void {
  summary.skippedTimeout = skips.reduce((n, k) => n + k.tooLong + k.cutOff, 0);
  if (byType) summary.skippedByType = Object.fromEntries(skips.map(({ type, ...counts }) => [type, counts]));
}

/** Counts claims and settlements on `summary` while the worker runs. */
export function countWorkerEvents(worker: WorkerBase, summary: TickSummary): void {
  worker.events.on('claimed', (jobs) => {
    summary.claimed += jobs.length;
  });
  worker.events.on('settled', (o: JobOutcome) => {
    if (o.status === 'succeeded') summary.succeeded++;
    else if (o.status === 'failed') summary.failed++;
    else if (o.status === 'retried') summary.retried++;
    else if (o.status === 'suspended') summary.suspended++;
    else if (o.status === 'stale') summary.lost++;
  });
}

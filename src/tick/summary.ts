// What a tick returns: counts gathered from the worker's events plus the
// start's recovery count, the slots fired and the ticks fanned out.
import type { JobOutcome, Worker } from '../worker/worker.js';

export interface TickSummary {
  /** Jobs this tick claimed. */
  claimed: number;
  succeeded: number;
  failed: number;
  /** Failed attempts that will run again (backoff), including handlers aborted at the deadline. */
  retried: number;
  /** Expired leases the start's recovery pass returned to ready (or failed). */
  recovered: number;
  /** Jobs the due recurring slots enqueued. */
  slotsFired: number;
  /** Further ticks invoked asynchronously. */
  fannedOut: number;
  /** Milliseconds left before the deadline when the tick returned. */
  msLeft: number;
}

export function emptySummary(): TickSummary {
  return { claimed: 0, succeeded: 0, failed: 0, retried: 0, recovered: 0, slotsFired: 0, fannedOut: 0, msLeft: 0 };
}

/** Counts claims and settlements on `summary` while the worker runs. */
export function countWorkerEvents(worker: Worker, summary: TickSummary): void {
  worker.events.on('claimed', (jobs) => {
    summary.claimed += jobs.length;
  });
  worker.events.on('settled', (o: JobOutcome) => {
    if (o.status === 'succeeded') summary.succeeded++;
    else if (o.status === 'failed') summary.failed++;
    else if (o.status === 'retried') summary.retried++;
  });
}

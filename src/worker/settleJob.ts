// Records a handler's outcome under the fence, through the batching settler:
// success completes the job; a failure retries with backoff (or the worker's
// retryDelayMs override) or ends it failed. A lease already known lost, or a
// settlement the fence refuses, becomes a `stale` event and writes nothing.
import type { ClaimedJob } from '../db/rows.js';
import { StaleLeaseError } from '../errors.js';
import { errorToJson, isRetryable } from './errorJson.js';
import type { HandlerOutcome } from './invokeHandler.js';
import type { RetryDelay } from './options.js';
import type { Settler, SettleOutcome } from './settler.js';

/** What happened to one job this worker ran. */
export type JobOutcome =
  | { job: ClaimedJob; status: 'succeeded'; result: unknown }
  | { job: ClaimedJob; status: 'retried' | 'failed'; error: unknown }
  | { job: ClaimedJob; status: 'stale'; error: StaleLeaseError };

export interface SettleDeps {
  settler: Settler;
  retryDelayMs: RetryDelay | undefined;
  onStale(error: StaleLeaseError, job: ClaimedJob): void;
  onSettled(outcome: JobOutcome): void;
}

export async function settleJob(
  job: ClaimedJob,
  outcome: HandlerOutcome,
  lost: { reason: unknown } | null,
  deps: SettleDeps,
): Promise<void> {
  const lease = { id: job.id, execution: job.execution };
  const stale = (error: StaleLeaseError) => {
    deps.onStale(error, job);
    deps.onSettled({ job, status: 'stale', error });
  };
  if (lost) {
    stale(lost.reason instanceof StaleLeaseError ? lost.reason : new StaleLeaseError(job.id, job.execution, 'settle'));
    return;
  }
  let result: SettleOutcome;
  if (outcome.ok) {
    result = await withRetries(() => deps.settler.complete(lease, outcome.value));
  } else {
    const retryDelayMs = retryDelayFor(deps.retryDelayMs, job);
    const final = !isRetryable(outcome.error);
    result = await withRetries(() => deps.settler.fail({ ...lease, error: errorToJson(outcome.error), retryDelayMs, final }));
  }
  if (!result.accepted) {
    stale(new StaleLeaseError(job.id, job.execution, outcome.ok ? 'complete' : 'fail'));
    return;
  }
  if (outcome.ok) deps.onSettled({ job, status: 'succeeded', result: outcome.value });
  else deps.onSettled({ job, status: result.status === 'ready' ? 'retried' : 'failed', error: outcome.error });
}

function retryDelayFor(o: RetryDelay | undefined, job: ClaimedJob): number | null {
  if (o === undefined) return null;
  if (typeof o === 'number') return o;
  const v = o(job.attempt, job);
  return v === undefined ? null : Math.max(0, Math.round(v));
}

/** Settlement writes retry briefly on connection errors; the lease covers the rest. */
async function withRetries<T>(fn: () => Promise<T>, attempts = 4): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= attempts) throw err;
      await new Promise((r) => setTimeout(r, 100 * 2 ** i));
    }
  }
}

// Runs a batch handler: one call for several claimed jobs of one type, when
// one provider call can serve several payloads. Every member still occupies
// a concurrency slot and keeps its own lease, fence, signal, timeout,
// retries and result. The callback returns one outcome per member, in
// order: an Error instance fails that member, any other value is its result.
import type { ClaimedJob } from '../db/protocol.js';
import { JobTimeoutError, ValidationError } from '../errors.js';
import { createBatchContext, type BatchContext, type ContextDeps } from './context.js';
import { parsePayload, type HandlerEntry, type HandlerOutcome } from './invokeHandler.js';
import type { JobAbort } from './jobAbort.js';

export type BatchHandler<P = unknown> = (payloads: P[], ctxs: BatchContext[]) => Promise<unknown[]> | unknown[];

export interface BatchMember {
  job: ClaimedJob;
  abort: JobAbort;
}

export async function invokeBatch(
  members: BatchMember[],
  entry: HandlerEntry & { batch: BatchHandler },
  deps: ContextDeps,
): Promise<HandlerOutcome[]> {
  const outcomes: (HandlerOutcome | undefined)[] = members.map(() => undefined);
  const live: number[] = [];
  const payloads: unknown[] = [];
  members.forEach((m, i) => {
    try {
      payloads.push(parsePayload(entry.def, m.job));
      live.push(i);
    } catch (error) {
      outcomes[i] = { ok: false, error };
    }
  });
  const timers = members.map((m) =>
    m.job.timeoutMs ? setTimeout(() => m.abort.abort(new JobTimeoutError(m.job.id, m.job.timeoutMs!)), m.job.timeoutMs) : undefined,
  );
  try {
    if (live.length > 0) {
      const ctxs = live.map((i) => createBatchContext(members[i]!.job, members[i]!.abort, deps));
      const results = await untilAllAborted(
        Promise.resolve()
          .then(() => entry.batch(payloads, ctxs))
          .then(settledOutcomes),
        live.map((i) => members[i]!.abort),
      ).then(
        (r) => r,
        // Whatever the batch threw fails every member as it is (stored by errorToJson, its `retryable` kept).
        (error: unknown) => new Thrown(error),
      );
      const threw = results instanceof Thrown;
      const valid = Array.isArray(results) && results.length === live.length;
      live.forEach((memberIndex, k) => {
        const abort = members[memberIndex]!.abort;
        if (abort.aborted) outcomes[memberIndex] = { ok: false, error: abort.reason };
        else if (threw) outcomes[memberIndex] = { ok: false, error: results.value };
        else if (!valid) {
          // A handler's mistake, not a fault: failed at once like any other result it cannot have (it was retried to the end).
          outcomes[memberIndex] = {
            ok: false,
            error: Object.assign(
              new ValidationError(
                `the batch handler for "${members[memberIndex]!.job.type}" must return an array of one outcome per job, in order (a result, or an Error to fail that job): it was given ${live.length} job${live.length === 1 ? '' : 's'} and returned ${returnedWhat(results)}`,
              ),
              { retryable: false },
            ),
          };
        } else {
          const r = (results as unknown[])[k];
          outcomes[memberIndex] = r instanceof Thrown ? { ok: false, error: r.value } : r instanceof Error ? { ok: false, error: r } : { ok: true, value: r };
        }
      });
    }
  } finally {
    for (const t of timers) if (t) clearTimeout(t);
    for (const m of members) m.abort.onAbort(undefined);
  }
  return outcomes as HandlerOutcome[];
}

/**
 * Outcomes that are promises (`payloads.map(async (p) => ...)` without
 * Promise.all) are awaited, each rejection failing its own job. They were
 * stored as `{}` (every job succeeded with nothing), and a rejection among
 * them was an unhandled one that ended the process.
 */
async function settledOutcomes(results: unknown): Promise<unknown> {
  if (!Array.isArray(results) || !results.some(isThenable)) return results;
  return Promise.all(results.map((r) => (isThenable(r) ? Promise.resolve(r).then((v) => v, (e: unknown) => new Thrown(e)) : r)));
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return v !== null && (typeof v === 'object' || typeof v === 'function') && typeof (v as { then?: unknown }).then === 'function';
}

/** What a batch handler returned instead of one outcome per job, for its error message. */
function returnedWhat(results: unknown): string {
  if (Array.isArray(results)) return `${results.length} outcome${results.length === 1 ? '' : 's'}`;
  if (results === null) return 'null';
  return typeof results === 'object' ? 'an object, not an array' : `a ${typeof results}, not an array`;
}

/** What the batch call threw, told apart from anything it could return. */
class Thrown {
  constructor(readonly value: unknown) {}
}

/** The batch's result, or a rejection once every member has been aborted. */
function untilAllAborted<T>(p: Promise<T>, aborts: JobAbort[]): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let left = aborts.filter((a) => !a.aborted).length;
    if (left === 0) return reject(aborts[0]?.reason);
    for (const a of aborts) {
      if (a.aborted) continue;
      a.onAbort((reason) => {
        if (--left === 0) reject(reason);
      });
    }
    p.then(resolve, reject);
  });
}

// Runs one claimed job's handler: parses the stored payload with the job's
// schema, builds the handler context, arms the job's timeout, and turns
// whatever happens into an outcome. An abort (lease lost, timeout, hard
// stop) ends the wait at once, even if the handler ignores its signal.
import type { z } from 'zod';
import type { JobDefinition } from '../client/defineJob.js';
import type { ClaimedJob } from '../db/protocol.js';
import { JobTimeoutError, ValidationError } from '../errors.js';
import { toIssues } from '../validation.js';
import { createContext, type BatchContext, type ContextDeps, type HandlerContext, type JobContext } from './context.js';
import type { JobAbort } from './jobAbort.js';

export type Handler<P = unknown, R = unknown> = (payload: P, ctx: HandlerContext) => Promise<R> | R;

export interface HandlerEntry {
  /** A per-job handler, or … */
  fn?: Handler;
  /** … a batch handler with the largest batch it takes. */
  batch?: (payloads: unknown[], ctxs: BatchContext[]) => Promise<unknown[]> | unknown[];
  maxBatch?: number;
  def: JobDefinition | undefined;
}

/** A handler's outcome; a suspension (a durable wait) is an error of class JobSuspension. */
export type HandlerOutcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export async function invokeHandler(
  job: ClaimedJob,
  entry: HandlerEntry,
  abort: JobAbort,
  deps: ContextDeps,
): Promise<HandlerOutcome> {
  let timer: NodeJS.Timeout | undefined;
  let ctx: JobContext | undefined;
  if (job.timeoutMs) {
    timer = setTimeout(() => abort.abort(new JobTimeoutError(job.id, job.timeoutMs!)), job.timeoutMs);
  }
  try {
    if (abort.aborted) throw abort.reason;
    const payload = parsePayload(entry.def, job);
    ctx = createContext(job, abort, deps);
    const returned = entry.fn!(payload as never, ctx);
    const value = isThenable(returned) ? await untilAborted(returned, abort) : returned;
    // A wait suspended the job: whatever the handler did after that is discarded.
    if (ctx.suspension) return { ok: false, error: ctx.suspension };
    return { ok: true, value };
  } catch (error) {
    return { ok: false, error: ctx?.suspension ?? error };
  } finally {
    abort.onAbort(undefined);
    if (timer) clearTimeout(timer);
  }
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof v === 'object' && v !== null && typeof (v as PromiseLike<unknown>).then === 'function';
}

/** The handler's value, or a rejection with the abort reason as soon as the job is aborted. */
function untilAborted<T>(p: PromiseLike<T>, abort: JobAbort): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (abort.aborted) return reject(abort.reason);
    abort.onAbort(reject);
    p.then(resolve, reject);
  });
}

/** A stored payload that no longer matches its schema fails at once: retrying cannot help. */
export function parsePayload(def: JobDefinition | undefined, job: ClaimedJob): unknown {
  if (!def) return job.payload;
  const r = (def.schema as z.ZodType).safeParse(job.payload);
  if (r.success) return r.data;
  const err = new ValidationError(`stored payload of job ${job.id} no longer matches the schema of "${job.type}"`, toIssues(r.error));
  (err as ValidationError & { retryable: boolean }).retryable = false;
  throw err;
}

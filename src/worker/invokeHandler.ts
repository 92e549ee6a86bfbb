// Runs one claimed job's handler: parses the stored payload with the job's
// schema, builds the handler context, arms the job's timeout, and turns
// whatever happens into an outcome. An abort (lease lost, timeout, hard
// stop) ends the wait at once, even if the handler ignores its signal.
import type { z } from 'zod';
import type { JobDefinition } from '../client/defineJob.js';
import type { ClaimedJob } from '../db/rows.js';
import { JobTimeoutError, ValidationError } from '../errors.js';
import { toIssues } from '../validation.js';
import { createContext, type ContextDeps, type HandlerContext } from './context.js';

export type Handler<P = unknown, R = unknown> = (payload: P, ctx: HandlerContext) => Promise<R> | R;

export interface HandlerEntry {
  fn: Handler;
  def: JobDefinition | undefined;
}

export type HandlerOutcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export async function invokeHandler(
  job: ClaimedJob,
  entry: HandlerEntry,
  controller: AbortController,
  deps: ContextDeps,
): Promise<HandlerOutcome> {
  let timer: NodeJS.Timeout | undefined;
  if (job.timeoutMs) {
    timer = setTimeout(() => controller.abort(new JobTimeoutError(job.id, job.timeoutMs!)), job.timeoutMs);
  }
  try {
    const payload = parsePayload(entry.def, job);
    const ctx = createContext(job, controller.signal, deps);
    const value = await raceAbort(Promise.resolve().then(() => entry.fn(payload as never, ctx)), controller.signal);
    return { ok: true, value };
  } catch (error) {
    return { ok: false, error };
  } finally {
    if (timer) clearTimeout(timer);
  }
}

/** A stored payload that no longer matches its schema fails at once: retrying cannot help. */
function parsePayload(def: JobDefinition | undefined, job: ClaimedJob): unknown {
  if (!def) return job.payload;
  const r = (def.schema as z.ZodType).safeParse(job.payload);
  if (r.success) return r.data;
  const err = new ValidationError(`stored payload of job ${job.id} no longer matches the schema of "${job.type}"`, toIssues(r.error));
  (err as ValidationError & { retryable: boolean }).retryable = false;
  throw err;
}

/** Resolves with the handler's value, or rejects with the signal's reason once aborted. */
function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

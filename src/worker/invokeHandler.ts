// Runs one claimed job's handler: parses the stored payload with the job's
// schema, builds the handler context, arms the job's timeout, and turns
// whatever happens into an outcome. An abort (lease lost, timeout, hard
// stop) ends the wait at once, even if the handler ignores its signal; a
// handler still running then lingers (`Lingering`): the executor keeps its
// slot taken until it returns, so no more handlers run at once than the
// worker's concurrency, whatever its handlers do with their signal.
//
// A callback rather than an async function: an async frame, the promise
// racing the abort and the executor's `.then` were four promises and about
// a kilobyte per job, and with an AsyncLocalStorage context manager
// registered every promise also pays the context propagation hook. What is
// left per job is the handler's own promise and the one reaction to it.
import type { Context } from '@opentelemetry/api';
import type { z } from 'zod';
import type { JobDefinition } from '../client/defineJob.js';
import type { ClaimedJob } from '../db/protocol.js';
import { JobTimeoutError, ValidationError, WaitLostError } from '../errors.js';
import { withJobSpan } from '../telemetry/jobSpans.js';
import { safeParseSync, toIssues } from '../validation.js';
import { createContext, type BatchContext, type ContextDeps, type HandlerContext, type JobContext } from './context.js';
import type { JobAbort } from './jobAbort.js';
import { isSuspension } from './suspension.js';

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

const RESOLVED = Promise.resolve();

/**
 * Told when an attempt ended (an abort) while its handler still ran, and
 * when that handler returned at last; `report` once it still runs
 * LINGER_GRACE_MS after the abort (it ignored its signal).
 */
export interface Lingering {
  start(job: ClaimedJob): void;
  end(job: ClaimedJob): void;
  /** `waitingOnDatabase`: a call of its context (a step, progress, a wait, a spawn) was still waiting for the database. */
  report(job: ClaimedJob, reason: unknown, waitingOnDatabase: boolean): void;
}

/**
 * How long a handler may go on after its attempt ended before it is said to
 * ignore its signal. A handler that honours ctx.signal (it waits on the
 * abort event, then throws) settles a little after the abort, not in the
 * same microtask: reported at once, it was called one that ignored it.
 */
export const LINGER_GRACE_MS = 250;

/**
 * Starts the handler and calls `done` exactly once with its outcome, always
 * from a later microtask (never from inside this call or inside an abort),
 * so the caller is not re-entered. `span`: the attempt's span context, made
 * active around the handler call only (the handler's own spans nest under
 * it; the worker's settlement work does not).
 */
export function invokeHandler(
  job: ClaimedJob,
  entry: HandlerEntry,
  abort: JobAbort,
  deps: ContextDeps,
  done: (outcome: HandlerOutcome) => void,
  span?: Context,
  linger?: Lingering,
): void {
  new HandlerRun(job, abort, done, linger).start(entry, deps, span);
}

/**
 * One handler call's state. A class with methods rather than closures over
 * locals: one object per job, and no function object named per job (a
 * transform that keeps function names pays a defineProperty for each).
 */
class HandlerRun {
  private timer: NodeJS.Timeout | undefined;
  private ctx: JobContext | undefined;
  private finished = false;
  /** The handler's promise has not settled yet. */
  private pending = false;
  /** The attempt ended while the handler still ran (linger.start was called, linger.end not yet). */
  private lingering = false;
  /** Reports the handler as lingering unless it returns within LINGER_GRACE_MS. */
  private lingerReport: NodeJS.Timeout | undefined;

  constructor(
    private readonly job: ClaimedJob,
    private readonly abort: JobAbort,
    private readonly done: (outcome: HandlerOutcome) => void,
    private readonly linger: Lingering | undefined,
  ) {}

  start(entry: HandlerEntry, deps: ContextDeps, span: Context | undefined): void {
    const { abort, job } = this;
    if (job.timeoutMs) this.timer = setTimeout(() => abort.abort(new JobTimeoutError(job.id, job.timeoutMs!)), job.timeoutMs);
    let returned: unknown;
    try {
      if (abort.aborted) throw abort.reason;
      const payload = parsePayload(entry.def, job);
      const ctx = (this.ctx = createContext(job, abort, deps));
      returned = span ? withJobSpan(span, () => entry.fn!(payload as never, ctx)) : entry.fn!(payload as never, ctx);
    } catch (error) {
      return this.later({ ok: false, error });
    }
    if (!isThenable(returned)) return this.later({ ok: true, value: returned });
    this.pending = true;
    try {
      returned.then(
        (value) => this.returned({ ok: true, value }),
        (error: unknown) => this.returned({ ok: false, error }),
      );
    } catch (error) {
      this.pending = false;
      return this.later({ ok: false, error });
    }
    if (this.finished) return;
    if (abort.aborted) return this.later({ ok: false, error: abort.reason });
    abort.onAbort((reason) => this.later({ ok: false, error: reason }));
  }

  /** The handler's promise settled: its outcome, unless an abort already ended the attempt (then its slot is free now). */
  private returned(outcome: HandlerOutcome): void {
    this.pending = false;
    if (this.lingering) {
      this.lingering = false;
      if (this.lingerReport) clearTimeout(this.lingerReport);
      this.linger!.end(this.job);
    }
    this.finish(outcome);
  }

  private later(outcome: HandlerOutcome): void {
    void RESOLVED.then(() => this.finish(outcome));
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
  }

  /**
   * The job timed out while a suspension waited for steps still running
   * beside it: the job does not suspend; the timeout is its outcome, after
   * the waits it went on past are closed (as for any failure).
   */
  private abandoned(ctx: JobContext): Promise<HandlerOutcome> {
    const ended: HandlerOutcome = { ok: false, error: this.abort.reason };
    return ctx.closeLosers().then(
      () => ended,
      () => ended,
    );
  }

  private finish(outcome: HandlerOutcome): void {
    if (this.finished) return;
    this.finished = true;
    // Ended by an abort while the handler still runs: it keeps its slot until it returns, and is
    // reported as ignoring its signal if it is still running after the grace.
    if (this.pending && this.linger) {
      this.lingering = true;
      this.linger.start(this.job);
      const { linger, job } = this;
      const reason = outcome.ok ? undefined : outcome.error;
      this.lingerReport = setTimeout(() => linger.report(job, reason, (this.ctx?.databaseCalls ?? 0) > 0), LINGER_GRACE_MS);
      this.lingerReport.unref();
    }
    this.abort.onAbort(undefined);
    // A wait suspended the job: whatever the handler did after that is
    // discarded. Waits it opened beside that one (Promise.race, Promise.all)
    // are recorded first, so the suspension takes them into account.
    const ctx = this.ctx;
    // A suspension the handler threw itself (a wait of a Promise.all whose
    // other wait resolved) is one too.
    const suspension = ctx?.suspension ?? (!outcome.ok && isSuspension(outcome.error) ? outcome.error : undefined);
    if (ctx && suspension) {
      // Race losers the handler went on past are closed before it suspends;
      // the others were opened beside this wait (a Promise.all) and stay open.
      // Steps still running beside the wait are recorded first, under the
      // lease: the replay finds them recorded instead of running them again.
      // The job's timeout stays armed meanwhile: a step that outruns it ends
      // the attempt with JobTimeoutError (and aborts ctx.signal), as it would
      // without the wait.
      void ctx
        .waitsDecided()
        .then(() => ctx.steps.settled(this.abort))
        .then(() => (this.abort.reason instanceof JobTimeoutError ? this.abandoned(ctx) : ctx.closeLosers(true).then(() => undefined)))
        .then(
          (ended) => {
            this.disarm();
            if (ended) return this.done(ended);
            // The context's own, if one was recorded meanwhile (a wait opened
            // beside it that resolved takes it over: the job is ready at once).
            const s = ctx.suspension ?? suspension;
            // A wait that lost a race before cannot hold the job: it never resolves.
            this.done({ ok: false, error: ctx.lostWaits.has(s.wait) ? new WaitLostError(ctx.job.id, s.wait) : s });
          },
          (error: unknown) => {
            this.disarm();
            this.done({ ok: false, error });
          },
        );
      return;
    }
    this.disarm();
    // A failure: the waits the handler went on past are closed before the
    // job is retried, so nothing that arrives meanwhile resolves them; a
    // success closes the race losers it returned past (a finished job keeps
    // no wait open). Most runs have none and settle at once.
    if (ctx && (!outcome.ok || ctx.openLosers)) {
      void ctx
        .waitsDecided()
        .then(() => ctx.closeLosers())
        .then(
          () => this.done(outcome),
          () => this.done(outcome),
        );
      return;
    }
    this.done(outcome);
  }
}

/** Whether a returned value is a promise to wait for; a value whose `then` cannot be read is a plain result. */
function isThenable(v: unknown): v is PromiseLike<unknown> {
  try {
    return typeof v === 'object' && v !== null && typeof (v as PromiseLike<unknown>).then === 'function';
  } catch {
    return false;
  }
}

/** A stored payload that no longer matches its schema fails at once: retrying cannot help. */
export function parsePayload(def: JobDefinition | undefined, job: ClaimedJob): unknown {
  if (!def) return job.payload;
  const r = safeParseSync(def.schema as z.ZodType, job.payload, `the stored payload of job ${job.id} ("${job.type}")`);
  if (r.success) return r.data;
  const err = new ValidationError(`stored payload of job ${job.id} no longer matches the schema of "${job.type}"`, toIssues(r.error));
  (err as ValidationError & { retryable: boolean }).retryable = false;
  throw err;
}

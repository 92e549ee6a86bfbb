// Durable waits and child jobs: what a per-job handler's context adds to a
// batch context. Each wait is named and recorded (sql/protocol/waits.sql):
// the first time the handler reaches it, it opens under the fence; if it is
// not satisfied at once the job suspends (JobSuspension unwinds the
// handler, the worker frees the lease and the slot). The job resumes by
// replaying the handler from the top: recorded steps return their results,
// resolved waits their recorded values, spawns their first child, and the
// handler continues at the first wait that is still open. Names, keys,
// choices and prompts are checked before anything is written: a string
// PostgreSQL cannot store is a ValidationError naming the argument.
import * as z from 'zod';
import type { JobDefinition, PayloadInput } from '../client/defineJob.js';
import type { EnqueueOptions } from '../client/enqueueInput.js';
import { ChildJobFailedError, ConflictError, DecisionTimeoutError, SignalTimeoutError, UnknownJobTypeError, ValidationError, type ChildOutcome } from '../errors.js';
import { jobIdStringSchema, signalKeySchema, storableName, waitNameSchema } from '../names.js';
import { storableDateSchema, storableText } from '../storable.js';
import { describeIssues, parseField, safeParseSync, toIssues } from '../validation.js';
import type pg from 'pg';
import type { ClaimedJob, WaitSpec, WaitState } from '../db/protocol.js';
import type { ContextDeps } from './contextDeps.js';
import { checkDecisionOptions, checkJoinOptions, checkSignalOptions, checkSpawnArguments } from './waitArguments.js';
import { refusedForNow } from './stepTransaction.js';

/** What the durable methods need of a handler's context (JobContext provides it). */
export interface WaitHost {
  readonly job: ClaimedJob;
  readonly lease: { id: string; execution: number };
  readonly deps: ContextDeps;
  assertLive(what: string): void;
  /** A context call that writes: the waits that lost a race in this run are closed first. */
  goingOn(): Promise<void>;
  /** Spawns in flight by name: a second spawn of the name meanwhile gets the same child. */
  readonly spawning: Map<string, Promise<string>>;
  openWait(name: string, spec: WaitSpec): Promise<WaitState>;
  transaction<T>(what: string, fn: (tx: pg.PoolClient) => Promise<{ commit: boolean; value: T }>): Promise<T>;
}

/** The payload `spawn` accepts for a definition (its schema's input), or anything for a type name. */
export type PayloadOf<D> = D extends JobDefinition ? PayloadInput<D> : unknown;

export interface SignalWaitOptions<T> {
  /** Throws SignalTimeoutError when no signal arrived this long after the wait first opened. */
  timeoutMs?: number;
  /** Validates the payload (a payload that fails fails the job: it is recorded, so retrying cannot help). */
  schema?: z.ZodType<T>;
  /** Also accept a signal sent to this key (client.signalKey), so the sender need not know the job id. */
  key?: string;
}

export interface DecisionWaitOptions<C extends string> {
  /** The choices a person may make; client.decide refuses anything else. */
  choices: readonly C[];
  prompt?: string;
  /** Throws DecisionTimeoutError when nobody decided this long after the wait first opened. */
  timeoutMs?: number;
}

/** A human decision, as recorded (the audit trail). */
export interface DecisionResult<C extends string = string> {
  choice: C;
  by: string;
  comment: string | null;
  at: Date;
}

export type SpawnOptions = EnqueueOptions & {
  /** A detached child is not cancelled when its parent is. */
  detached?: boolean;
};

/** A spawned child job. */
export interface ChildJob {
  id: string;
  name: string;
  type: string;
}

export interface JoinOptions {
  /** all (default): wait for every child; any: return once one succeeded. */
  mode?: 'all' | 'any';
}

/** The durable half of a per-job handler's context. */
export interface DurableContext {
  /** Waits `ms` (from when this wait first opened, by the database clock) without holding a lease. */
  sleep(name: string, ms: number): Promise<void>;
  /** Waits until `at` without holding a lease. */
  sleepUntil(name: string, at: Date): Promise<void>;
  /** Waits for signal `name` (client.signal, or client.signalKey with `key`) and returns its payload. */
  waitForSignal<T = unknown>(name: string, options?: SignalWaitOptions<T>): Promise<T>;
  /** Waits for a person's decision (client.decide) among `choices`. */
  waitForDecision<C extends string>(name: string, options: DecisionWaitOptions<C>): Promise<DecisionResult<C>>;
  /** Enqueues a child job once per name (a replay returns the same child). */
  spawn<D extends JobDefinition | string>(name: string, job: D, payload: PayloadOf<D>, options?: SpawnOptions): Promise<ChildJob>;
  /**
   * Waits for children without a lease; returns their results in order (for
   * `any`, undefined for those that had not succeeded). A child that failed
   * or was cancelled makes it throw ChildJobFailedError (`any`: only when none
   * succeeded).
   */
  join(name: string, children: readonly (ChildJob | string)[], options?: JoinOptions): Promise<unknown[]>;
}

const MAX_WAIT_MS = 10 * 365 * 86_400_000;

/**
 * A wait, spawn or join refused with a ValidationError (its arguments, a
 * child's payload, a batch job that cannot wait) fails the job without
 * retries, as the signal payload's schema does: a retry runs the same code
 * on the same payload and would be refused the same way.
 */
export function refusedFinally<T>(p: Promise<T>): Promise<T> {
  return p.catch((err: unknown) => {
    throw finalRefusal(err);
  });
}

/** `err`, marked not retryable when it is a ValidationError or names a job type this build does not know (a spawn of a typo). */
export function finalRefusal(err: unknown): unknown {
  return err instanceof ValidationError || err instanceof UnknownJobTypeError ? Object.assign(err, { retryable: false }) : err;
}

/**
 * The most choices a decision offers, and the longest prompt. Both travel
 * with every pending decision (GET /decisions, the dashboard, the
 * workhorse.job.decision event, which a sink such as EventBridge caps at
 * 256 KB), so they are bounded like a decision's comment (4,000 characters).
 */
export const MAX_DECISION_CHOICES = 100;
export const MAX_DECISION_PROMPT = 4000;

/** The choices of a decision: each one a person can pick, so none twice (a duplicate was a second, identical button). */
const choicesSchema = z
  .array(storableName(200))
  .min(1, 'must not be empty')
  .max(MAX_DECISION_CHOICES, `offers at most ${MAX_DECISION_CHOICES} choices`)
  .refine((c) => new Set(c).size === c.length, 'must not repeat a choice');
const promptSchema = storableText(z.string().max(MAX_DECISION_PROMPT)).optional();

/** A wait's name; a ValidationError with the path ["name"] otherwise. */
function checkName(what: string, name: unknown): void {
  parseField(waitNameSchema, name, 'name', what);
}

function checkMs(what: string, ms: unknown, field: string): void {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0 || ms > MAX_WAIT_MS) {
    throw new ValidationError(`${what}: ${field} must be a number of milliseconds from 0 to ${MAX_WAIT_MS}`, [
      { path: [field], message: 'invalid duration' },
    ]);
  }
}

export async function sleep(ctx: WaitHost, name: string, ms: number): Promise<void> {
  checkName('sleep', name);
  checkMs(`sleep "${name}"`, ms, 'ms');
  await ctx.openWait(name, { kind: 'sleep', wakeInMs: ms });
}

export async function sleepUntil(ctx: WaitHost, name: string, at: Date): Promise<void> {
  checkName('sleepUntil', name);
  parseField(storableDateSchema, at, 'at', `sleepUntil "${name}"`);
  await ctx.openWait(name, { kind: 'sleep', wakeAt: at });
}

export async function waitForSignal<T>(ctx: WaitHost, name: string, o: SignalWaitOptions<T> = {}): Promise<T> {
  checkName('waitForSignal', name);
  checkSignalOptions(name, o);
  if (o.timeoutMs !== undefined) checkMs(`waitForSignal "${name}"`, o.timeoutMs, 'timeoutMs');
  if (o.key !== undefined) parseField(signalKeySchema, o.key, 'key', `waitForSignal "${name}"`);
  const w = await ctx.openWait(name, { kind: 'signal', wakeInMs: o.timeoutMs ?? null, key: o.key ?? null });
  if (w.outcome === 'timeout') throw new SignalTimeoutError(ctx.job.id, name);
  if (!o.schema) return w.value as T;
  const r = safeParseSync(o.schema, w.value, `signal "${name}" of job ${ctx.job.id}`);
  if (r.success) return r.data;
  // The payload is recorded: a retry would read the same one.
  const issues = toIssues(r.error);
  throw Object.assign(new ValidationError(`signal "${name}" of job ${ctx.job.id}: the payload does not match its schema: ${describeIssues(issues)}`, issues), {
    retryable: false,
  });
}

export async function waitForDecision<C extends string>(ctx: WaitHost, name: string, o: DecisionWaitOptions<C>): Promise<DecisionResult<C>> {
  checkName('waitForDecision', name);
  checkDecisionOptions(name, o);
  const choices = parseField(choicesSchema, o?.choices, 'choices', `waitForDecision "${name}"`) as C[];
  parseField(promptSchema, o?.prompt, 'prompt', `waitForDecision "${name}"`);
  if (o.timeoutMs !== undefined) checkMs(`waitForDecision "${name}"`, o.timeoutMs, 'timeoutMs');
  const w = await ctx.openWait(name, { kind: 'decision', wakeInMs: o.timeoutMs ?? null, choices: [...choices], prompt: o.prompt ?? null });
  if (w.outcome === 'timeout') throw new DecisionTimeoutError(ctx.job.id, name);
  const v = w.value as { choice: C; by: string; comment: string | null; at: string };
  return { choice: v.choice, by: v.by, comment: v.comment ?? null, at: new Date(v.at) };
}

export async function spawn<D extends JobDefinition | string>(
  ctx: WaitHost,
  name: string,
  job: D,
  payload: PayloadOf<D>,
  options: SpawnOptions = {},
): Promise<ChildJob> {
  checkName('spawn', name);
  ctx.assertLive(`spawn "${name}"`);
  // Options that are not an object were spread to nothing and ignored; enqueue refuses them.
  if (options !== undefined && options !== null && !isPlainObject(options)) {
    const message = 'options must be an object ({ detached?, ...enqueue options })';
    throw new ValidationError(`spawn "${name}": ${message}`, [{ path: ['options'], message }]);
  }
  const { detached = false, ...enqueue } = options ?? {};
  checkSpawnArguments(name, job, detached);
  // Validated before anything is written, like an enqueue.
  const row = ctx.deps.childRow(job, payload, enqueue);
  await ctx.goingOn();
  // A name spawns one child: a second spawn of it while the first is in
  // flight (a Promise.all) gets that child, as a later one would.
  const inFlight = ctx.spawning.get(name);
  if (inFlight) return { id: await inFlight, name, type: row.type };
  const { namespace, protocol } = ctx.deps;
  // Every statement here is workhorse's own: one refused for now runs the whole transaction again (refusedForNow).
  const spawning = ctx.transaction(`spawn "${name}"`, async (tx) => {
    const earlier = await refusedForNow(protocol.beginSpawn(tx, namespace, ctx.lease, name));
    if (earlier) return { commit: false, value: earlier };
    const [created] = await refusedForNow(protocol.enqueueMany(tx, namespace, [row]));
    // A dedupeKey another job holds returns that job: it is not a new child
    // (it may be another parent's), so the spawn is refused and rolled back.
    if (!created!.created) throw refusedDedupe(ctx.job.id, name, row.dedupe_key, created!.id);
    await refusedForNow(protocol.linkChild(tx, namespace, ctx.lease, name, created!.id, detached));
    return { commit: true, value: created!.id };
  });
  ctx.spawning.set(name, spawning);
  try {
    return { id: await spawning, name, type: row.type };
  } finally {
    ctx.spawning.delete(name);
  }
}

/** An object literal (or one without a prototype): not an array, a Date, a Map or a class instance. */
function isPlainObject(v: unknown): boolean {
  if (typeof v !== 'object' || v === null) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** A value a handler passed, for an error message: JSON when it has one (never throwing: a BigInt, a cycle), cut to 100 characters. */
function shown(v: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(v) ?? String(v);
  } catch {
    text = typeof v === 'bigint' ? `${v}n` : Object.prototype.toString.call(v);
  }
  return text.length > 100 ? `${text.slice(0, 99)}…` : text;
}

/** A child's dedupeKey held by another job: refused without retries (a retry would find the same job). */
function refusedDedupe(jobId: string, name: string, key: unknown, holder: string): ConflictError {
  return Object.assign(
    new ConflictError(
      `spawn "${name}" of job ${jobId}: dedupeKey "${String(key)}" is held by job ${holder}; a spawn always creates a new child and never adopts an existing job (another spawn's child, another parent's, or one enqueued on its own)`,
    ),
    { retryable: false },
  );
}

export async function join(
  ctx: WaitHost,
  name: string,
  children: readonly (ChildJob | string)[],
  o: JoinOptions = {},
): Promise<unknown[]> {
  checkName('join', name);
  checkJoinOptions(name, o);
  const mode = o.mode ?? 'all';
  if (mode !== 'all' && mode !== 'any') throw new ValidationError(`join "${name}": mode is all or any`, [{ path: ['mode'], message: 'invalid mode' }]);
  // Joining all of no children (a fan-out over a list that happened to be empty) has nothing to wait for:
  // their results are none, at once, and no wait is opened (so every replay answers the same).
  if (Array.isArray(children) && children.length === 0 && mode === 'all') return [];
  const ids = (Array.isArray(children) ? children : []).map((c) => (typeof c === 'string' ? c : c?.id));
  if (ids.length === 0) {
    // `any` of none can never succeed: a mistake in the handler, not a wait.
    throw new ValidationError(`join "${name}": children must be an array of spawned children or job ids${Array.isArray(children) ? " (mode 'any' needs at least one)" : ''}`, [
      { path: ['children'], message: 'invalid children' },
    ]);
  }
  const bad = ids.findIndex((id) => !jobIdStringSchema.safeParse(id).success);
  if (bad >= 0) {
    const message = `${shown(children[bad])} is not a spawned child (what spawn returned) or a job id (a string of digits, at most 2^63-1)`;
    throw new ValidationError(`join "${name}": children.${bad}: ${message}`, [{ path: ['children', bad], message }]);
  }
  const w = await ctx.openWait(name, { kind: 'join', children: ids as string[], mode });
  const outcomes = w.value as ChildOutcome[];
  const failed = outcomes.some((c) => c.status === 'failed' || c.status === 'cancelled');
  const succeeded = outcomes.some((c) => c.status === 'succeeded');
  if (mode === 'all' ? failed : !succeeded) throw new ChildJobFailedError(name, outcomes);
  return outcomes.map((c) => (c.status === 'succeeded' ? c.result : undefined));
}

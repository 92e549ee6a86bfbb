// The handler context: the claimed job, its AbortSignal, and the durable
// writes a handler can make — progress, checkpoints (`step`), transactional
// steps (`txStep`) and, for per-job handlers, durable waits and child jobs
// (durable.ts). Every write carries (job id, execution) and is refused with
// StaleLeaseError once the fence has moved on. A batch handler's contexts
// are typed BatchContext: no waits (a batch cannot suspend one member).
//
// Database faults: a step's fenced read and its record are idempotent, so a
// fault there is retried while the job holds its lease (retried()), and so
// is getting a transactional step's connection (stepTransaction.ts). So is
// a refusal an operator ends without a code change (the runtime role's
// grants revoked, a protocol function dropped: operatorFixable.ts), for a
// step's writes and a transactional step's own statements alike: a grant
// revoked for 6 s failed jobs of maxAttempts 1 whose ctx.step met it. A
// transactional step's connection that dies rejects the step with a
// retryable DatabaseUnavailableError: its transaction rolled back (or, if
// the commit went through unseen, the retry finds the step recorded), so the
// effect stays exactly once. Its session carries server-side bounds so a
// stalled step cannot pin its lease: PostgreSQL ends a transaction left idle
// for two heartbeats, or a statement running longer than the lease.
import type pg from 'pg';
import { pause, retryTransient } from '../db/retryTransient.js';
import { isTransientDbError } from '../db/transient.js';
import { isOperatorFixable } from '../db/operatorFixable.js';
import type { ClaimedJob, WaitSpec, WaitState } from '../db/protocol.js';
import { StaleLeaseError, StepTransactionEndedError, ValidationError, WaitLostError } from '../errors.js';
import type { JobDefinition } from '../client/defineJob.js';
import type { ContextDeps } from './contextDeps.js';
import * as durable from './durable.js';
import type { ChildJob, DecisionResult, DurableContext } from './durable.js';
import type { JobAbort } from './jobAbort.js';
import { untilAborted } from '../boundedWait.js';
import { checkStepFn, checkStepName } from './stepArguments.js';
import { dropped, StepsInFlight } from './stepsInFlight.js';
import { raceTurn, type RaceEntry } from './raceOrder.js';
import { JobSuspension } from './suspension.js';
import { assertStorableStepResult, refusedRecord } from './stepResult.js';
import type { Jsonified } from './jsonified.js';
import { assertStorableProgress } from './progressValue.js';
import { refusedForNow, runStepTransaction, stepClient } from './stepTransaction.js';
import { RefusalWindow } from './refusalWindow.js';

/** What every handler's context has, a batch handler's included. */
export interface BatchContext {
  /** The claimed job: id, type, queue, attempt, execution (the fence), … */
  readonly job: ClaimedJob;
  /** Aborted when the lease is lost, the job times out or the worker stops hard. */
  readonly signal: AbortSignal;
  readonly workerId: string;
  /** The time by which the handler must finish (tick workers), or null. */
  readonly deadline: Date | null;
  /** Milliseconds left before `deadline` (Infinity when there is none). */
  remainingMs(): number;
  /** Stores a progress value on the job, under the fence. */
  progress(value: unknown): Promise<void>;
  /**
   * A checkpoint: runs `fn` once and records its JSON result. On a retried
   * job a recorded step returns the recorded result and `fn` does not run.
   * Every run answers the recorded JSON (a Date comes back as its ISO string).
   */
  step<T>(name: string, fn: () => Promise<T> | T): Promise<Jsonified<T>>;
  /**
   * A transactional step: `fn`'s writes through the pg client it is handed
   * commit in the same transaction as the step's checkpoint, under the fence,
   * so the step takes effect exactly once.
   */
  txStep<T>(name: string, fn: (tx: pg.PoolClient) => Promise<T>): Promise<Jsonified<T>>;
}

/** A per-job handler's context: a batch context plus durable waits and child jobs (see durable.ts). */
export interface HandlerContext extends BatchContext, DurableContext {}

export type { ContextDeps } from './contextDeps.js';

/** A fenced, idempotent context write that met a database fault is tried again after this long, then with backoff up to the cap. */
const CONTEXT_RETRY_FIRST_MS = 100;
const CONTEXT_RETRY_MAX_MS = 2_000;

/**
 * The context one handler receives. A class, so a job costs one small
 * object rather than a closure per method; the signal is made on first use.
 */
export class JobContext implements HandlerContext {
  readonly lease: { id: string; execution: number };
  /** Set when a wait suspended the job: the handler's outcome is this, whatever it does next. */
  suspension: JobSuspension | undefined;
  /** Waits being opened now (each settles when its begin_wait_v1 call has). */
  private readonly opening = new Set<Promise<void>>();
  /** How many waits this run found resolved: one resolved beside an open wait means the open one lost a race. */
  private resolvedWaits = 0;
  /**
   * Waits that lost a race in this run and are not closed yet (lose_waits_v1
   * before the handler's next write), each with whether the handler had
   * already made another context call since the race was won.
   */
  private readonly losers = new Map<string, boolean>();
  /** Context calls made so far (steps, waits, spawns), and how many when a wait last returned resolved. */
  private calls = 0;
  private callsAtResolve = 0;
  /** Waits being opened until each returned or threw (openWait settled). */
  private readonly deciding = new Set<Promise<void>>();
  /**
   * The resolved waits of the waits being opened together (a batch begins
   * when a wait opens while none is being opened), each with when it
   * resolved and its place in the batch: they return in that order.
   */
  private batch: RaceEntry[] = [];
  private batchSize = 0;
  /** Waits known to have lost a race (closed in this run or an earlier one): the job never suspends on one. */
  readonly lostWaits = new Set<string>();
  /** The closing of losers in flight, if any. */
  private closing: Promise<void> = Promise.resolve();
  /** Spawns in flight by name (durable.spawn). */
  readonly spawning = new Map<string, Promise<string>>();
  /** Steps started and not yet recorded, by name: a suspension waits for them, a second call of a name gets the first's (stepsInFlight.ts). */
  readonly steps = new StepsInFlight();
  /** Calls of this context waiting on the database now (its fenced writes and transactions): a handler still in one after its attempt ended is not said to ignore ctx.signal. */
  databaseCalls = 0;

  constructor(
    readonly job: ClaimedJob,
    private readonly abort: JobAbort,
    readonly deps: ContextDeps,
    /** False for a batch member: it cannot wait. */
    private readonly durable = true,
  ) {
    this.lease = { id: job.id, execution: job.execution };
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  get workerId(): string {
    return this.deps.workerId;
  }

  get deadline(): Date | null {
    return this.deps.deadline;
  }

  remainingMs(): number {
    return this.deps.deadline ? Math.max(0, this.deps.deadline.getTime() - Date.now()) : Infinity;
  }

  progress(value: unknown): Promise<void> {
    return dropped(this.setProgress(value));
  }

  private async setProgress(value: unknown): Promise<void> {
    if (this.suspension) throw this.suspension;
    assertStorableProgress(this.job.id, value, this.deps.maxProgressBytes);
    await this.retried(() => this.deps.protocol.setProgress(this.deps.db, this.deps.namespace, this.lease, value));
  }

  step<T>(name: string, fn: () => Promise<T> | T): Promise<Jsonified<T>> {
    return this.steps.run(name, `step "${name}"`, () => this.runStep(name, fn));
  }

  private async runStep<T>(name: string, fn: () => Promise<T> | T): Promise<Jsonified<T>> {
    checkStepName(name, 'step');
    checkStepFn(fn, `step "${name}"`);
    this.assertLive(`step "${name}"`);
    await this.goingOn();
    const { db, namespace, protocol } = this.deps;
    // A fenced read: a stale owner is refused before `fn` runs.
    const opened = await this.retried(() => protocol.beginTxStep(db, namespace, this.lease, name, `step "${name}"`));
    if (opened.recorded) return opened.result as Jsonified<T>;
    // So is one that learned it lost the lease while the read waited (a lock held it back past the lease).
    this.assertLeaseHeld(`step "${name}"`);
    const result = await this.steps.body(name, fn);
    const what = `step "${name}"`;
    assertStorableStepResult(what, this.job.id, result);
    return (await refusedRecord(what, this.job.id, this.retried(() => protocol.recordStep(db, namespace, this.lease, name, result)))) as Jsonified<T>;
  }

  /** Tracked like a plain step: a suspension waits for it, and its failure the handler no longer awaits is dropped. */
  txStep<T>(name: string, fn: (tx: pg.PoolClient) => Promise<T>): Promise<Jsonified<T>> {
    return this.steps.run(name, `transactional step "${name}"`, () => this.runTxStep(name, fn));
  }

  private async runTxStep<T>(name: string, fn: (tx: pg.PoolClient) => Promise<T>): Promise<Jsonified<T>> {
    checkStepName(name, 'transactional step');
    checkStepFn(fn, `transactional step "${name}"`);
    this.assertLive(`transactional step "${name}"`);
    await this.goingOn();
    const { namespace, protocol } = this.deps;
    const what = `transactional step "${name}"`;
    return this.transaction(what, async (tx, txid, enterBody) => {
      // The step's own statements: refused for a reason an operator ends, the transaction is run again (refusedForNow).
      const opened = await refusedForNow(protocol.beginTxStep(tx, namespace, this.lease, name));
      if (opened.recorded) return { commit: false, value: opened.result as Jsonified<T> };
      this.assertLeaseHeld(what);
      enterBody(); // from here only a lost connection runs the step again (twice at most), and 25P03 not at all (stepTransaction.ts)
      const result = await this.steps.body(name, () => fn(stepClient(tx, what)));
      assertStorableStepResult(what, this.job.id, result); // throws before the commit: its writes roll back
      // The recorded JSON, as a replay gets it (and as step() answers): a Date is its ISO string on every run.
      const record = await refusedRecord(what, this.job.id, refusedForNow(protocol.recordTxStep(tx, namespace, this.lease, name, result, txid)));
      // The body ended the transaction itself (a commit or a rollback): nothing was recorded.
      if (!record) throw new StepTransactionEndedError(this.job.id, name);
      // An earlier record won (it committed while this one ran): this run's writes roll back, its result is the record's.
      return { commit: record.won, value: record.result as Jsonified<T> };
    });
  }

  sleep(name: string, ms: number): Promise<void> {
    return dropped(durable.refusedFinally(durable.sleep(this, name, ms)));
  }

  sleepUntil(name: string, at: Date): Promise<void> {
    return dropped(durable.refusedFinally(durable.sleepUntil(this, name, at)));
  }

  waitForSignal<T = unknown>(name: string, options?: durable.SignalWaitOptions<T>): Promise<T> {
    return dropped(durable.refusedFinally(durable.waitForSignal(this, name, options)));
  }

  waitForDecision<C extends string>(name: string, options: durable.DecisionWaitOptions<C>): Promise<DecisionResult<C>> {
    return dropped(durable.refusedFinally(durable.waitForDecision(this, name, options)));
  }

  spawn<D extends JobDefinition | string>(name: string, job: D, payload: durable.PayloadOf<D>, options?: durable.SpawnOptions): Promise<ChildJob> {
    // A batch member's context has no spawn (typed out): refused like its waits, not a child made for it.
    if (!this.durable) return dropped(Promise.reject(new ValidationError(`spawn "${String(name)}": a batch handler's jobs cannot spawn children`)));
    return dropped(durable.refusedFinally(durable.spawn(this, name, job, payload, options)));
  }

  join(name: string, children: readonly (ChildJob | string)[], options?: durable.JoinOptions): Promise<unknown[]> {
    return dropped(durable.refusedFinally(durable.join(this, name, children, options)));
  }

  /**
   * Opens (or, replaying, finds) a durable wait under the fence. Resolved:
   * its recorded state. Not yet: the job suspends (throws JobSuspension).
   */
  openWait(name: string, spec: WaitSpec): Promise<WaitState> {
    const p = this.decideWait(name, spec);
    const settled = p.then(
      () => undefined,
      () => undefined,
    );
    this.deciding.add(settled);
    void settled.then(() => this.deciding.delete(settled));
    return p;
  }

  private async decideWait(name: string, spec: WaitSpec): Promise<WaitState> {
    this.assertLive(`wait "${name}"`);
    if (!this.durable) throw new ValidationError(`wait "${name}": a batch handler's jobs cannot wait`);
    const { db, namespace, protocol } = this.deps;
    // The handler went on past a race it lost a wait of: closed first, so no
    // later arrival resolves the loser and changes the race on a replay.
    if (this.opening.size === 0) {
      this.batch = [];
      this.batchSize = 0;
    }
    const batch = this.batch;
    const seq = this.batchSize++;
    const opening = this.goingOn().then(() => this.retried(() => protocol.beginWait(db, namespace, this.lease, name, spec)));
    const written = opening.then(
      () => undefined,
      () => undefined,
    );
    this.opening.add(written);
    void written.then(() => this.opening.delete(written));
    const resolvedBefore = this.resolvedWaits;
    const state = await opening;
    const lostBefore = state.outcome === 'lost';
    if (state.resolved && !lostBefore) {
      this.resolvedWaits++;
      this.callsAtResolve = this.calls;
      // Of waits opened together that are resolved, the first resolved
      // returns first (a race's winner), on the first run as on every
      // replay: each waits for the batch to be written, then for its turn.
      // (An instant within the batch's own openings counts as one: raceOrder.ts.)
      const mine = { at: state.resolvedAt?.getTime() ?? 0, started: state.startedAt.getTime(), seq };
      batch.push(mine);
      await this.waitsOpened();
      const turn = raceTurn(mine, batch);
      for (let i = 0; i < turn; i++) await new Promise((resolve) => setImmediate(resolve));
      // Opened beside a wait that already suspended the job: the handler
      // never saw this outcome, so the job suspends on this wait instead,
      // which is resolved: it is ready again at once.
      if (this.suspension) this.suspension = new JobSuspension(this.job.id, name);
      return state;
    }
    // Waits opened beside this one (Promise.race, Promise.all) are written
    // first, and one of them that is resolved reaches the handler before
    // this suspension does: a race of a signal with a sleep that is due
    // returns the sleep, as a replay must.
    await this.waitsOpened();
    await new Promise((resolve) => setImmediate(resolve));
    // A wait opened beside this one resolved meanwhile: this one lost a race
    // (or is one of a Promise.all that goes on waiting for it).
    const raced = this.resolvedWaits !== resolvedBefore;
    if (lostBefore) {
      // It lost a race in an earlier run: the race replays as it ran (the
      // recorded winner wins again). Reached on its own, it never resolves.
      this.lostWaits.add(name);
      if (this.suspension) throw this.suspension;
      if (raced) throw new JobSuspension(this.job.id, name);
      throw new WaitLostError(this.job.id, name);
    }
    // A wait opened beside this one resolved: in a Promise.race the handler
    // has gone on with it, so this wait's suspension must not become the
    // run's outcome (it would discard what the handler does next and leave
    // the job waiting on the loser). Thrown all the same, so a Promise.all
    // of the two rejects with it and the handler suspends by rethrowing it;
    // if the handler goes on instead, the wait is closed as lost.
    if (raced) {
      this.losers.set(name, this.calls > this.callsAtResolve);
      throw this.suspension ?? new JobSuspension(this.job.id, name);
    }
    this.suspension ??= new JobSuspension(this.job.id, name);
    throw this.suspension;
  }

  /**
   * Settles once every wait the handler started opening has been written
   * (or refused): the job suspends only after that, so suspend_many_v1
   * sees each of its open waits.
   */
  async waitsOpened(): Promise<void> {
    while (this.opening.size > 0) await Promise.all(this.opening);
  }

  /** Settles once every wait the handler opened has returned or thrown (the run's outcome is known). */
  async waitsDecided(): Promise<void> {
    while (this.deciding.size > 0) await Promise.all(this.deciding);
  }

  /** Whether a wait of this run lost a race and is not closed yet, or may still (a wait not yet returned). */
  get openLosers(): boolean {
    return this.losers.size > 0 || this.deciding.size > 0;
  }

  /** A context call that writes: counted, and the race losers the handler went on past are closed first. */
  goingOn(): Promise<void> {
    this.calls++;
    return this.losers.size > 0 ? this.closeLosers() : this.closing;
  }

  /**
   * Closes the waits that lost a race in this run (lose_waits_v1). Called
   * before the handler's next step, wait or spawn, and before the run ends
   * (a finished job keeps no wait open). When it suspends, only
   * the losers it had gone on past (`passedOnly`): the others were opened
   * beside the wait it suspends on (a Promise.all), and it waits on them too.
   */
  closeLosers(passedOnly = false): Promise<void> {
    const names = [...this.losers].filter(([, passed]) => passed || !passedOnly).map(([n]) => n);
    if (names.length === 0) return this.closing;
    for (const n of names) {
      this.losers.delete(n);
      this.lostWaits.add(n);
    }
    const { db, namespace, protocol } = this.deps;
    this.closing = this.closing.then(() => this.retried(() => protocol.loseWaits(db, namespace, this.lease, names)).then(() => undefined));
    return this.closing;
  }

  /** Runs `fn` in a transaction of its own (stepTransaction.ts): a connection that cannot be had is waited for while the lease holds. */
  async transaction<T>(what: string, fn: (tx: pg.PoolClient, txid: string, enterBody: () => void) => Promise<{ commit: boolean; value: T }>): Promise<T> {
    this.databaseCalls++;
    try {
      return await runStepTransaction(this.deps, this.job.id, this.abort, what, fn);
    } finally {
      this.databaseCalls--;
    }
  }

  /**
   * Retries an idempotent fenced write on a database fault for as long as
   * the job holds its lease, and on a refusal an operator ends
   * (operatorFixable.ts: revoked grants, a dropped function) for one lease
   * window (refusalWindow.ts): an outage (a restart, a failover, a read-only
   * spell, no free connection) is waited out, as settlements wait it out,
   * instead of failing the attempt (which used up an attempt, and failed a
   * job of maxAttempts 1 for good). The wait ends when the job is aborted
   * (its lease lost, its timeout, a hard stop, a tick's abort instant). A
   * stale lease is never retried. The signal is taken only once a fault
   * happened (making it costs a controller per job).
   */
  async retried<T>(fn: () => Promise<T>): Promise<T> {
    this.databaseCalls++;
    try {
      return await this.retriedCall(fn);
    } finally {
      this.databaseCalls--;
    }
  }

  private async retriedCall<T>(fn: () => Promise<T>): Promise<T> {
    try {
      // An abort (the job's timeout, a lost lease) ends the wait for an answer: a frozen server held it for the call's whole bound.
      const r = await untilAborted(fn(), this.abort.signal);
      // Any handler write that goes through ends the worker's `handler writes` fault (a no-op when none is open).
      this.deps.writeFaults.ok();
      return r;
    } catch (err) {
      if (!(isTransientDbError(err) || isOperatorFixable(err)) || this.abort.aborted) throw err;
      // A refusal an operator ends is waited out for one lease window, each failure reported (refusalWindow.ts).
      const window = new RefusalWindow(this.deps.refusalWindowMs, this.deps.writeFaults, this.job.id);
      window.allows(err); // a refusal starts the window
      window.failed(err);
      const signal = this.abort.signal;
      await pause(CONTEXT_RETRY_FIRST_MS, signal);
      if (signal.aborted) throw err;
      try {
        const r = await retryTransient(() => untilAborted(fn(), signal), {
          baseMs: CONTEXT_RETRY_FIRST_MS * 2,
          maxMs: CONTEXT_RETRY_MAX_MS,
          signal,
          alsoRetry: (e) => window.allows(e),
          onRetry: (e) => window.failed(e),
        });
        this.deps.writeFaults.ok();
        return r;
      } catch (e) {
        throw window.giveUp(e);
      }
    }
  }

  assertLive(what: string): void {
    if (this.suspension) throw this.suspension;
    this.assertLeaseHeld(what);
  }

  /** Refuses `what` once the attempt lost its lease (a step already under way when the job suspended goes on). */
  private assertLeaseHeld(what: string): void {
    if (this.abort.aborted && this.abort.reason instanceof StaleLeaseError) {
      throw new StaleLeaseError(this.job.id, this.job.execution, what, this.abort.reason.expiredMs);
    }
  }
}

export function createContext(job: ClaimedJob, abort: JobAbort, deps: ContextDeps): JobContext {
  return new JobContext(job, abort, deps);
}

/** A batch member's context: no durable waits (typed out, and refused if called anyway). */
export function createBatchContext(job: ClaimedJob, abort: JobAbort, deps: ContextDeps): BatchContext {
  return new JobContext(job, abort, deps, false);
}

// The worker: a peer that registers, claims due jobs in batches, runs their
// handlers, heartbeats all its leases on one timer, settles in batches and
// deregisters. Every worker runs this same loop against the same rows; the
// database is the only coordinator. The tick worker drives the same class
// through runOnce() with a deadline.
import { EventEmitter } from 'node:events';
import type pg from 'pg';
import type { Client } from '../client/client.js';
import type { JobDefinition, PayloadOutput } from '../client/defineJob.js';
import { GuardedDb } from '../db/guardedDb.js';
import * as protocol from '../db/protocol.js';
import { retryTransient } from '../db/retryTransient.js';
import type { ClaimedJob } from '../db/protocol.js';
import { describeDbError, isTransientDbError } from '../db/transient.js';
import { StaleLeaseError, WorkerStoppedError } from '../errors.js';
import { leaseMsFor } from '../timing.js';
import { parseConfig } from '../validation.js';
import { claimThreshold, freeRoom } from './claimBatching.js';
import { invokeBatch, type BatchHandler } from './invokeBatch.js';
import type { ContextDeps } from './context.js';
import { HandlerRegistry } from './handlerRegistry.js';
import { invokeHandler, type Handler, type HandlerEntry, type HandlerOutcome } from './invokeHandler.js';
import { resolveWorkerOptions, workerOptionsSchema, type ResolvedWorkerOptions, type WorkerOptions } from './options.js';
import { settleJob, type SettleDeps } from './settleJob.js';
import { Heartbeat } from './heartbeat.js';
import { Settler } from './settler.js';
import { Waiter, type WakeReason } from './waiter.js';
import { WakeListener } from './wakeListener.js';
import { ScheduleRunner } from '../schedules/runner.js';
import { Slot } from './slot.js';
import type { RuntimeState, WorkerEvents, WorkerInternals } from './workerTypes.js';

export type { Handler } from './invokeHandler.js';
export type { BatchHandler } from './invokeBatch.js';
export type { JobOutcome } from './settleJob.js';
export type { RuntimeState, WorkerEvents, WorkerInternals } from './workerTypes.js';

/** A protocol call (claim, settle, register) may take this long before its connection is destroyed. */
const PROTOCOL_CALL_TIMEOUT_MS = 60_000;
/** The longest wait between claims while the database is failing. */
const CLAIM_BACKOFF_MAX_MS = 5_000;
const DEREGISTER_ATTEMPTS = 5;

export class Worker {
  readonly options: ResolvedWorkerOptions;
  readonly events = new EventEmitter<WorkerEvents>();
  private readonly handlers: HandlerRegistry;
  private readonly slots = new Map<string, Slot>();
  private readonly buffer: ClaimedJob[] = [];
  private readonly waiter = new Waiter();
  private readonly settler: Settler;
  private readonly settleDeps: SettleDeps;
  /** What every handler context shares; built once, not per job. */
  private readonly contextDeps: ContextDeps;
  private readonly leaseMs: number;
  private registered = false;
  private registering: Promise<void> | undefined;
  private readonly beats: Heartbeat;
  private listener: WakeListener | undefined;
  private localPaused = false;
  private operatorPaused = false;
  private stopping = false;
  private running: Promise<void> | undefined;
  private queueCursor = 0;
  private runningCount = 0;
  private claimInFlight: Promise<void> | undefined;
  /** Protocol calls: bounded by a timeout, broken connections destroyed. */
  private readonly db: GuardedDb;
  /** Aborted by stop(): ends waits for the database (start-up, claim backoff, deregister retries). */
  private readonly halt = new AbortController();
  /** Aborted by a hard stop: ends the bounded deregister retries too. */
  private readonly giveUp = new AbortController();
  private claimFailures = 0;
  private schedules: ScheduleRunner | undefined;
  private readonly kind: 'process' | 'tick';
  private readonly deadline: Date | null;
  private readonly maxTimeoutMs: (() => number | null) | undefined;

  constructor(
    readonly client: Client,
    options: WorkerOptions = {},
    internals: WorkerInternals = {},
  ) {
    this.options = resolveWorkerOptions(parseConfig(workerOptionsSchema, options, 'worker options'));
    this.handlers = new HandlerRegistry(client);
    this.leaseMs = leaseMsFor(this.options.heartbeatMs);
    this.db = new GuardedDb(client.pool, { timeoutMs: Math.max(PROTOCOL_CALL_TIMEOUT_MS, this.leaseMs) });
    this.beats = new Heartbeat({
      db: new GuardedDb(client.pool, { timeoutMs: this.leaseMs }),
      namespace: client.namespace,
      workerId: this.options.workerId,
      intervalMs: this.options.heartbeatMs,
      leaseMs: this.leaseMs,
      recoverLimit: this.options.recoverLimit,
      leases: () => [...this.slots.values()].map((s) => ({ id: s.job.id, execution: s.job.execution, started: s.started })),
      active: () => this.runningCount,
      onLost: (id) => this.loseLease(id, 'heartbeat'),
      onResult: async (hb) => {
        const wasPaused = this.isPaused();
        this.operatorPaused = hb.paused;
        if (wasPaused && !this.isPaused()) this.waiter.wake();
        if (!hb.registered && !this.stopping) await this.register();
      },
      onError: (err) => this.emitError(err),
    });
    this.settler = new Settler(this.db, client.namespace, (err, ms) => this.emitError(err, `settle failed; retrying in ${ms} ms`));
    this.settleDeps = {
      settler: this.settler,
      retryDelayMs: this.options.retryDelayMs,
      onStale: (error, j) => this.events.emit('stale', error, j),
      onSettled: (o) => this.events.emit('settled', o),
      onError: (err) => this.emitError(err),
    };
    this.kind = internals.kind ?? 'process';
    this.deadline = internals.deadline ?? null;
    this.maxTimeoutMs = internals.maxTimeoutMs;
    this.registered = internals.preRegistered ?? false;
    this.contextDeps = {
      db: this.db,
      namespace: client.namespace,
      workerId: this.options.workerId,
      deadline: this.deadline,
      txIdleTimeoutMs: 2 * this.options.heartbeatMs,
      txStatementTimeoutMs: this.leaseMs,
    };
  }

  get workerId(): string {
    return this.options.workerId;
  }

  /** Binds a job type (or definition) to a handler. Chainable. */
  handle<D extends JobDefinition>(job: D, fn: Handler<PayloadOutput<D>>): this;
  handle<P = unknown>(type: string, fn: Handler<P>): this;
  handle(job: JobDefinition | string, fn: Handler<never>): this {
    this.handlers.addHandler(job, fn);
    return this;
  }

  /**
   * Binds a job type to a batch handler: jobs of this type claimed together
   * (up to `maxBatch`, default 50, and the free concurrency) go to one call.
   * Each member keeps its own slot, lease, fence, signal, retries and result;
   * the callback returns one outcome per payload, in order, where an Error
   * instance fails that job and any other value is its result. Chainable.
   */
  handleBatch<D extends JobDefinition>(job: D, fn: BatchHandler<PayloadOutput<D>>, options?: { maxBatch?: number }): this;
  handleBatch<P = unknown>(type: string, fn: BatchHandler<P>, options?: { maxBatch?: number }): this;
  handleBatch(job: JobDefinition | string, fn: BatchHandler<never>, options: { maxBatch?: number } = {}): this {
    this.handlers.addBatchHandler(job, fn, options.maxBatch);
    return this;
  }

  /** Job types this worker claims: exactly those it has handlers for. */
  get types(): string[] {
    return this.handlers.types;
  }

  pause(): void {
    this.localPaused = true;
  }

  resume(): void {
    this.localPaused = false;
    this.waiter.wake();
  }

  isPaused(): boolean {
    return this.localPaused || this.operatorPaused;
  }

  runtimeState(): RuntimeState {
    return {
      workerId: this.workerId,
      registered: this.registered,
      running: Boolean(this.running),
      stopping: this.stopping,
      paused: this.isPaused(),
      localPaused: this.localPaused,
      operatorPaused: this.operatorPaused,
      active: this.runningCount,
      buffered: this.buffer.length,
      concurrency: this.options.concurrency,
      activeJobIds: [...this.slots.keys()],
    };
  }

  /**
   * Runs until `signal` aborts or stop() is called, then drains: no new
   * claims, active handlers finish, settlements are written, the worker
   * deregisters and run() resolves.
   */
  run(signal?: AbortSignal): Promise<void> {
    if (this.running) return this.running;
    if (signal?.aborted) return Promise.resolve();
    signal?.addEventListener('abort', () => void this.stop(), { once: true });
    this.running = this.loop().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /**
   * One claim-and-run pass: claims up to the free slots, runs every claimed
   * job to settlement, and returns whether it found work. Registers the
   * worker on first use; stop() deregisters it.
   */
  async runOnce(): Promise<boolean> {
    await this.start();
    if (this.stopping || this.isPaused()) return false;
    const claimed = await this.claim();
    await Promise.all(claimed.map((s) => s.done()));
    await this.settler.drain();
    return claimed.length > 0;
  }

  /**
   * Aborts the signal of every handler that is running (the tick's hard
   * deadline). They settle as failures and the worker stays registered;
   * stop() afterwards drains and deregisters as usual.
   */
  abortActive(reason: unknown = new WorkerStoppedError()): void {
    for (const s of this.slots.values()) if (s.started) s.abort.abort(reason);
  }

  /**
   * Drains and deregisters. With `{ hard: true }` it aborts every handler's
   * signal at once instead of waiting, and leaves their leases to recovery.
   */
  async stop(options: { hard?: boolean } = {}): Promise<void> {
    this.stopping = true;
    this.halt.abort();
    this.waiter.wake();
    if (options.hard) {
      this.giveUp.abort();
      this.settler.abandon();
      for (const s of this.slots.values()) s.abort.abort(new WorkerStoppedError());
    }
    if (this.running) {
      if (options.hard) {
        await this.shutdown();
        return;
      }
      await this.running;
      return;
    }
    if (!options.hard) await this.drainActive();
    await this.shutdown();
  }

  private async loop(): Promise<void> {
    try {
      if (!(await this.startPatiently())) return;
      await this.startSchedules();
      let reason: WakeReason = 'hint';
      while (!this.stopping) {
        if (!this.isPaused() && this.freeSlots() >= claimThreshold(this.options, reason, this.slots.size === 0)) {
          try {
            const want = this.freeSlots();
            const got = await this.claim();
            this.claimFailures = 0;
            if (got.length > 0 && got.length === want) {
              reason = 'slot';
              continue;
            }
          } catch (err) {
            // A database fault: back off (capped) instead of polling a dead server.
            const delay = Math.min(CLAIM_BACKOFF_MAX_MS, 100 * 2 ** Math.min(this.claimFailures++, 10));
            this.emitError(err, `claim failed; retrying in ${delay} ms`);
            reason = await this.waiter.wait(Math.max(delay, 1));
            continue;
          }
        }
        reason = await this.waiter.wait(this.options.pollMs);
      }
      await this.drainActive();
    } finally {
      await this.shutdown();
    }
  }

  /**
   * start(), waiting out database faults (capped backoff with jitter, one
   * log line per failure) until it succeeds or the worker is stopped. A
   * schema mismatch or any other error rejects at once. Returns false when
   * stopped before it could start.
   */
  private async startPatiently(): Promise<boolean> {
    try {
      await retryTransient(() => this.start(), {
        signal: this.halt.signal,
        baseMs: 250,
        maxMs: 10_000,
        onRetry: (err, ms) => this.emitError(err, `cannot reach the database; retrying in ${ms} ms`),
      });
      return true;
    } catch (err) {
      if (this.stopping && isTransientDbError(err)) return false;
      throw err;
    }
  }

  private async drainActive(): Promise<void> {
    for (;;) {
      const started = [...this.slots.values()].filter((s) => s.started);
      if (started.length === 0) break;
      await Promise.all(started.map((s) => s.done()));
    }
    await this.settler.drain();
  }

  /** Registers once and starts the heartbeat timer and wake listener. */
  private start(): Promise<void> {
    if (this.registered && this.beats.running) return Promise.resolve();
    this.registering ??= (async () => {
      if (!this.registered) {
        await this.client.ready();
        await this.register();
      }
      this.beats.start();
      if (this.options.listen && this.kind === 'process' && !this.listener) {
        const config = (this.client.pool as unknown as { options: pg.ClientConfig }).options;
        this.listener = new WakeListener(
          config,
          this.client.namespace,
          new Set(this.options.queues),
          () => this.waiter.wake(),
          (err) => this.emitError(err, 'wake listener cannot connect; the safety poll covers the gap'),
        );
        this.listener.start();
      }
    })().finally(() => {
      this.registering = undefined;
    });
    return this.registering;
  }

  private async register(): Promise<void> {
    await protocol.registerWorker(this.db, this.client.namespace, {
      workerId: this.workerId,
      build: this.options.build,
      kind: this.kind,
      queues: this.options.queues,
      types: this.types,
      concurrency: this.options.concurrency,
      heartbeatMs: this.options.heartbeatMs,
      deadline: this.deadline,
    });
    this.registered = true;
    this.operatorPaused = false;
  }

  /** With scheduleNamespaces, a companion loop fires due recurring slots while the worker runs. */
  private async startSchedules(): Promise<void> {
    const namespaces = this.options.scheduleNamespaces;
    if (!namespaces || this.kind !== 'process') return;
    this.schedules = new ScheduleRunner(this.client, {
      scheduleNamespaces: namespaces,
      scheduleCatchupLimit: this.options.scheduleCatchupLimit,
      intervalMs: Math.min(5000, this.options.pollMs * 5),
      workerId: `${this.workerId}:schedules`,
      onError: (err) => this.emitError(err),
    });
    await this.schedules.start();
  }

  private async shutdown(): Promise<void> {
    await this.schedules?.stop();
    this.schedules = undefined;
    await this.listener?.close();
    this.listener = undefined;
    await this.beats.stop();
    await this.claimInFlight;
    if (!this.registered) return;
    this.registered = false;
    const unstarted = this.buffer.splice(0).map((j) => j.id);
    for (const id of unstarted) {
      this.slots.get(id)?.finish();
      this.slots.delete(id);
    }
    try {
      // Safe to repeat: a second call finds nothing left to release. Bounded,
      // so a dead database cannot hold a stopping process; the leases then
      // expire and recovery returns the jobs.
      await retryTransient(() => protocol.deregisterWorker(this.db, this.client.namespace, this.workerId, unstarted), {
        attempts: DEREGISTER_ATTEMPTS,
        signal: this.giveUp.signal,
        baseMs: 200,
        maxMs: 2000,
      });
    } catch (err) {
      this.emitError(err, 'deregister failed; the leases will expire and be recovered');
    }
  }

  private freeSlots(): number {
    return freeRoom(this.options, this.runningCount, this.buffer.length);
  }

  private rotatedQueues(): string[] {
    const q = this.options.queues;
    if (q.length === 1) return q;
    const start = this.queueCursor++ % q.length;
    return [...q.slice(start), ...q.slice(0, start)];
  }

  /** Claims up to the free slots in one statement and starts what fits. */
  private async claim(): Promise<Slot[]> {
    const limit = this.freeSlots();
    if (limit <= 0 || this.handlers.size === 0) return [];
    const maxTimeoutMs = this.maxTimeoutMs?.() ?? null;
    if (maxTimeoutMs !== null && maxTimeoutMs <= 0) return [];
    const claiming = protocol.claimMany(this.db, this.client.namespace, {
      workerId: this.workerId,
      queues: this.rotatedQueues(),
      types: this.types,
      limit,
      leaseMs: this.leaseMs,
      maxTimeoutMs,
      // The jobs the worker starts at once are marked started in their
      // leases; the rest wait in the buffer and are marked by a heartbeat.
      start: Math.max(0, this.options.concurrency - this.runningCount - this.buffer.length),
    });
    // shutdown() waits for an in-flight claim, so what it returns is admitted
    // (and, when stopping, handed back by deregister) rather than orphaned.
    this.claimInFlight = claiming.then(
      () => undefined,
      () => undefined,
    );
    const jobs = await claiming;
    if (jobs.length === 0) return [];
    this.events.emit('claimed', jobs);
    const slots = jobs.map((job) => this.admit(job));
    this.startBuffered();
    return slots;
  }

  private admit(job: ClaimedJob): Slot {
    const slot = new Slot(job);
    this.slots.set(job.id, slot);
    this.buffer.push(job);
    return slot;
  }

  private startBuffered(): void {
    while (this.buffer.length > 0 && this.runningCount < this.options.concurrency && !this.stopping) {
      const job = this.buffer.shift()!;
      const slot = this.slots.get(job.id);
      if (!slot) continue;
      const entry = this.handlers.get(job.type)!;
      if (entry.batch) {
        this.startBatch(slot, entry as HandlerEntry & { batch: BatchHandler });
        continue;
      }
      slot.started = true;
      this.runningCount++;
      this.execute(slot, invokeHandler(job, entry, slot.abort, this.contextDeps));
    }
  }

  /** Starts `first` with the buffered jobs of its type that fit, in one batch call. */
  private startBatch(first: Slot, entry: HandlerEntry & { batch: BatchHandler }): void {
    const room = Math.min(entry.maxBatch ?? 50, this.options.concurrency - this.runningCount);
    const group = [first];
    for (let i = 0; i < this.buffer.length && group.length < room; ) {
      const mate = this.slots.get(this.buffer[i]!.id);
      if (mate && mate.job.type === first.job.type) {
        group.push(mate);
        this.buffer.splice(i, 1);
      } else i++;
    }
    for (const s of group) s.started = true;
    this.runningCount += group.length;
    const outcomes = invokeBatch(group, entry, this.contextDeps);
    group.forEach((s, i) => this.execute(s, outcomes.then((o) => o[i]!)));
  }

  /**
   * Settles a started job once its handler's outcome is known. Plain
   * promise callbacks rather than an async function: nothing per job stays
   * suspended across the handler and the settlement round trip.
   */
  private execute(slot: Slot, running: Promise<HandlerOutcome>): void {
    running.then(
      (outcome) => this.afterHandler(slot, outcome),
      (error: unknown) => this.afterHandler(slot, { ok: false, error }),
    );
  }

  private afterHandler(slot: Slot, outcome: HandlerOutcome): void {
    this.runningCount--;
    // The handler's slot is free now; the lease stays held (and heartbeated)
    // until the settlement is written.
    this.startBuffered();
    this.waiter.wake('slot');
    settleJob(slot.job, outcome, slot.lost ? { reason: slot.abort.reason } : null, this.settleDeps, () => {
      if (this.slots.get(slot.job.id) === slot) this.slots.delete(slot.job.id);
      slot.finish();
    });
  }

  /** Heartbeats now: one statement refreshes the registry row, extends every lease, recovers. */
  heartbeat(): Promise<void> {
    return this.registered ? this.beats.beat() : Promise.resolve();
  }

  private loseLease(jobId: string, what: string): void {
    const slot = this.slots.get(jobId);
    if (!slot || slot.lost) return;
    slot.lost = true;
    const err = new StaleLeaseError(jobId, slot.job.execution, what);
    slot.abort.abort(err);
    if (!slot.started) {
      const i = this.buffer.findIndex((j) => j.id === jobId);
      if (i >= 0) this.buffer.splice(i, 1);
      this.slots.delete(jobId);
      slot.finish();
      this.events.emit('stale', err, slot.job);
    }
  }

  /**
   * An `error` event, or one log line when nobody listens. A database fault
   * is a line with its message; anything unexpected is printed whole.
   */
  private emitError(err: unknown, what?: string): void {
    if (this.events.listenerCount('error') > 0) {
      this.events.emit('error', err);
      return;
    }
    const prefix = `[workhorse] worker ${this.workerId}:`;
    if (isTransientDbError(err)) console.error(`${prefix} ${what ?? 'database fault'}: ${describeDbError(err)}`);
    else console.error(`${prefix} ${what ?? 'error'}:`, err);
  }
}

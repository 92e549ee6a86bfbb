// The worker: a peer that registers, claims due jobs in batches, runs their
// handlers, heartbeats all its leases on one timer, settles in batches and
// deregisters. Every worker runs this same loop against the same rows; the
// database is the only coordinator. The tick worker drives the same class
// through runOnce() with a deadline.
import { EventEmitter } from 'node:events';
import type pg from 'pg';
import type { z } from 'zod';
import type { Client } from '../client/client.js';
import type { JobDefinition, PayloadOutput } from '../client/defineJob.js';
import * as protocol from '../db/protocol.js';
import type { ClaimedJob } from '../db/rows.js';
import { JobTimeoutError, StaleLeaseError, ValidationError, WorkerStoppedError } from '../errors.js';
import { leaseMsFor } from '../timing.js';
import { parseConfig, toIssues } from '../validation.js';
import { createContext, type HandlerContext } from './context.js';
import { errorToJson, isRetryable } from './errorJson.js';
import { resolveWorkerOptions, workerOptionsSchema, type ResolvedWorkerOptions, type WorkerOptions } from './options.js';
import { Settler, type SettleOutcome } from './settler.js';
import { Waiter, type WakeReason } from './waiter.js';
import { WakeListener } from './wakeListener.js';

export type Handler<P = unknown, R = unknown> = (payload: P, ctx: HandlerContext) => Promise<R> | R;

/** What happened to one job this worker ran. */
export type JobOutcome =
  | { job: ClaimedJob; status: 'succeeded'; result: unknown }
  | { job: ClaimedJob; status: 'retried' | 'failed'; error: unknown }
  | { job: ClaimedJob; status: 'stale'; error: StaleLeaseError };

export interface WorkerEvents {
  claimed: [jobs: ClaimedJob[]];
  settled: [outcome: JobOutcome];
  /** A write by this worker was refused by the fence (the job moved on). */
  stale: [error: StaleLeaseError, job: ClaimedJob];
  error: [error: unknown];
}

export interface RuntimeState {
  workerId: string;
  registered: boolean;
  running: boolean;
  stopping: boolean;
  paused: boolean;
  localPaused: boolean;
  operatorPaused: boolean;
  active: number;
  buffered: number;
  concurrency: number;
  activeJobIds: string[];
}

interface Slot {
  job: ClaimedJob;
  controller: AbortController;
  started: boolean;
  lost: boolean;
  done: Promise<void>;
  finish: () => void;
}

/** Internal knobs the tick worker sets; not part of the public options. */
export interface WorkerInternals {
  kind?: 'process' | 'tick';
  deadline?: Date | null;
  /** Only claim jobs whose timeout fits in this many ms (computed per claim). */
  maxTimeoutMs?: () => number | null;
  /**
   * The caller already checked the schema and registered this worker id (the
   * tick's merged start call): start() only starts the heartbeat timer.
   */
  preRegistered?: boolean;
}

export class Worker {
  readonly options: ResolvedWorkerOptions;
  readonly events = new EventEmitter<WorkerEvents>();
  private readonly handlers = new Map<string, { fn: Handler; def: JobDefinition | undefined }>();
  private readonly slots = new Map<string, Slot>();
  private readonly buffer: ClaimedJob[] = [];
  private readonly waiter = new Waiter();
  private readonly settler: Settler;
  private readonly leaseMs: number;
  private registered = false;
  private registering: Promise<void> | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private heartbeatInFlight: Promise<void> | undefined;
  private lastHeartbeatOk = Date.now();
  private listener: WakeListener | undefined;
  private localPaused = false;
  private operatorPaused = false;
  private stopping = false;
  private running: Promise<void> | undefined;
  private queueCursor = 0;
  private runningCount = 0;
  private claimInFlight: Promise<void> | undefined;
  private readonly kind: 'process' | 'tick';
  private readonly deadline: Date | null;
  private readonly maxTimeoutMs: (() => number | null) | undefined;

  constructor(
    readonly client: Client,
    options: WorkerOptions = {},
    internals: WorkerInternals = {},
  ) {
    this.options = resolveWorkerOptions(parseConfig(workerOptionsSchema, options, 'worker options'));
    this.leaseMs = leaseMsFor(this.options.heartbeatMs);
    this.settler = new Settler(client.pool, client.namespace);
    this.kind = internals.kind ?? 'process';
    this.deadline = internals.deadline ?? null;
    this.maxTimeoutMs = internals.maxTimeoutMs;
    this.registered = internals.preRegistered ?? false;
  }

  get workerId(): string {
    return this.options.workerId;
  }

  /** Binds a job type (or definition) to a handler. Chainable. */
  handle<D extends JobDefinition>(job: D, fn: Handler<PayloadOutput<D>>): this;
  handle<P = unknown>(type: string, fn: Handler<P>): this;
  handle(job: JobDefinition | string, fn: Handler<never>): this {
    const type = typeof job === 'string' ? job : job.type;
    if (typeof fn !== 'function') throw new ValidationError(`handler for "${type}" must be a function`);
    if (this.handlers.has(type)) throw new ValidationError(`a handler for "${type}" is already registered`);
    const def = typeof job === 'string' ? (this.client.hasDefinition(type) ? this.client.definition(type) : undefined) : job;
    this.handlers.set(type, { fn: fn as Handler, def });
    return this;
  }

  /** Job types this worker claims: exactly those it has handlers for. */
  get types(): string[] {
    return [...this.handlers.keys()];
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
    await Promise.all(claimed.map((s) => s.done));
    await this.settler.drain();
    return claimed.length > 0;
  }

  /**
   * Aborts the signal of every handler that is running (the tick's hard
   * deadline). They settle as failures and the worker stays registered;
   * stop() afterwards drains and deregisters as usual.
   */
  abortActive(reason: unknown = new WorkerStoppedError()): void {
    for (const s of this.slots.values()) if (s.started) s.controller.abort(reason);
  }

  /**
   * Drains and deregisters. With `{ hard: true }` it aborts every handler's
   * signal at once instead of waiting, and leaves their leases to recovery.
   */
  async stop(options: { hard?: boolean } = {}): Promise<void> {
    this.stopping = true;
    this.waiter.wake();
    if (options.hard) {
      for (const s of this.slots.values()) s.controller.abort(new WorkerStoppedError());
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
      await this.start();
      let reason: WakeReason = 'hint';
      while (!this.stopping) {
        if (!this.isPaused() && this.freeSlots() >= this.claimThreshold(reason)) {
          try {
            const want = this.freeSlots();
            const got = await this.claim();
            if (got.length > 0 && got.length === want) continue;
          } catch (err) {
            this.emitError(err);
          }
        }
        reason = await this.waiter.wait(this.options.pollMs);
      }
      await this.drainActive();
    } finally {
      await this.shutdown();
    }
  }

  private async drainActive(): Promise<void> {
    for (;;) {
      const started = [...this.slots.values()].filter((s) => s.started);
      if (started.length === 0) break;
      await Promise.all(started.map((s) => s.done));
    }
    await this.settler.drain();
  }

  /** Registers once and starts the heartbeat timer and wake listener. */
  private start(): Promise<void> {
    if (this.registered && this.heartbeatTimer) return Promise.resolve();
    this.registering ??= (async () => {
      if (!this.registered) {
        await this.client.ready();
        await this.register();
      }
      this.heartbeatTimer = setInterval(() => void this.heartbeat(), this.options.heartbeatMs);
      this.heartbeatTimer.unref();
      if (this.options.listen && this.kind === 'process') {
        const config = (this.client.pool as unknown as { options: pg.ClientConfig }).options;
        this.listener = new WakeListener(config, this.client.namespace, new Set(this.options.queues), () => this.waiter.wake());
        await this.listener.start().catch((err) => this.emitError(err));
      }
    })().finally(() => {
      this.registering = undefined;
    });
    return this.registering;
  }

  private async register(): Promise<void> {
    await protocol.registerWorker(this.client.pool, this.client.namespace, {
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
    this.lastHeartbeatOk = Date.now();
  }

  private async shutdown(): Promise<void> {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = undefined;
    await this.listener?.close();
    this.listener = undefined;
    await this.heartbeatInFlight;
    await this.claimInFlight;
    if (!this.registered) return;
    this.registered = false;
    const unstarted = this.buffer.splice(0).map((j) => j.id);
    for (const id of unstarted) {
      this.slots.get(id)?.finish();
      this.slots.delete(id);
    }
    try {
      await protocol.deregisterWorker(this.client.pool, this.client.namespace, this.workerId, unstarted);
    } catch (err) {
      this.emitError(err);
    }
  }

  /**
   * A freed slot alone waits until half the capacity is free, so a busy
   * worker claims in batches instead of one job per finished handler; a
   * hint, the safety poll, or an empty worker claims whatever is free.
   */
  private claimThreshold(reason: WakeReason): number {
    if (reason !== 'slot' || this.slots.size === 0) return 1;
    return Math.max(1, Math.floor((this.options.concurrency + this.options.prefetch) / 2));
  }

  /**
   * Capacity left for claiming: running handlers and the local buffer count;
   * jobs whose handler finished and whose settlement is in flight do not
   * (their leases are still heartbeated), so claims overlap settlements.
   */
  private freeSlots(): number {
    return this.options.concurrency + this.options.prefetch - this.runningCount - this.buffer.length;
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
    const claiming = protocol.claimMany(this.client.pool, this.client.namespace, {
      workerId: this.workerId,
      queues: this.rotatedQueues(),
      types: this.types,
      limit,
      leaseMs: this.leaseMs,
      maxTimeoutMs,
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
    let finish!: () => void;
    const done = new Promise<void>((r) => (finish = r));
    const slot: Slot = { job, controller: new AbortController(), started: false, lost: false, done, finish };
    this.slots.set(job.id, slot);
    this.buffer.push(job);
    return slot;
  }

  private startBuffered(): void {
    while (this.buffer.length > 0 && this.runningCount < this.options.concurrency && !this.stopping) {
      const job = this.buffer.shift()!;
      const slot = this.slots.get(job.id);
      if (!slot) continue;
      slot.started = true;
      this.runningCount++;
      void this.execute(slot);
    }
  }

  private async execute(slot: Slot): Promise<void> {
    const { job, controller } = slot;
    const entry = this.handlers.get(job.type)!;
    let timer: NodeJS.Timeout | undefined;
    if (job.timeoutMs) {
      timer = setTimeout(() => controller.abort(new JobTimeoutError(job.id, job.timeoutMs!)), job.timeoutMs);
    }
    let outcome: { ok: true; value: unknown } | { ok: false; error: unknown };
    try {
      const payload = this.parsePayload(entry.def, job);
      const ctx = createContext(job, controller.signal, {
        pool: this.client.pool,
        namespace: this.client.namespace,
        workerId: this.workerId,
        deadline: this.deadline,
      });
      const value = await raceAbort(Promise.resolve().then(() => entry.fn(payload as never, ctx)), controller.signal);
      outcome = { ok: true, value };
    } catch (error) {
      outcome = { ok: false, error };
    } finally {
      if (timer) clearTimeout(timer);
      this.runningCount--;
    }
    // The handler's slot is free now; the lease stays held (and heartbeated)
    // until the settlement is written.
    this.startBuffered();
    this.waiter.wake('slot');
    try {
      await this.settle(slot, outcome);
    } catch (err) {
      this.emitError(err);
    } finally {
      this.slots.delete(job.id);
      slot.finish();
    }
  }

  private parsePayload(def: JobDefinition | undefined, job: ClaimedJob): unknown {
    if (!def) return job.payload;
    const r = (def.schema as z.ZodType).safeParse(job.payload);
    if (r.success) return r.data;
    const err = new ValidationError(`stored payload of job ${job.id} no longer matches the schema of "${job.type}"`, toIssues(r.error));
    (err as ValidationError & { retryable: boolean }).retryable = false;
    throw err;
  }

  private async settle(slot: Slot, outcome: { ok: true; value: unknown } | { ok: false; error: unknown }): Promise<void> {
    const { job } = slot;
    const lease = { id: job.id, execution: job.execution };
    if (slot.lost) {
      const reason = slot.controller.signal.reason;
      const error = reason instanceof StaleLeaseError ? reason : new StaleLeaseError(job.id, job.execution, 'settle');
      this.events.emit('stale', error, job);
      this.events.emit('settled', { job, status: 'stale', error });
      return;
    }
    let result: SettleOutcome;
    if (outcome.ok) {
      result = await withRetries(() => this.settler.complete(lease, outcome.value));
    } else {
      const retryDelayMs = this.retryDelayFor(job);
      result = await withRetries(() =>
        this.settler.fail({ ...lease, error: errorToJson(outcome.error), retryDelayMs, final: !isRetryable(outcome.error) }),
      );
    }
    if (!result.accepted) {
      const error = new StaleLeaseError(job.id, job.execution, outcome.ok ? 'complete' : 'fail');
      this.events.emit('stale', error, job);
      this.events.emit('settled', { job, status: 'stale', error });
      return;
    }
    if (outcome.ok) this.events.emit('settled', { job, status: 'succeeded', result: outcome.value });
    else this.events.emit('settled', { job, status: result.status === 'ready' ? 'retried' : 'failed', error: outcome.error });
  }

  private retryDelayFor(job: ClaimedJob): number | null {
    const o = this.options.retryDelayMs;
    if (o === undefined) return null;
    if (typeof o === 'number') return o;
    const v = o(job.attempt, job);
    return v === undefined ? null : Math.max(0, Math.round(v));
  }

  /** One statement: refresh the registry row, extend every lease, recover. */
  heartbeat(): Promise<void> {
    if (this.heartbeatInFlight || !this.registered) return this.heartbeatInFlight ?? Promise.resolve();
    this.heartbeatInFlight = this.beat().finally(() => {
      this.heartbeatInFlight = undefined;
    });
    return this.heartbeatInFlight;
  }

  private async beat(): Promise<void> {
    const leases = [...this.slots.values()].map((s) => ({ id: s.job.id, execution: s.job.execution }));
    try {
      const hb = await protocol.heartbeatMany(
        this.client.pool,
        this.client.namespace,
        this.workerId,
        leases,
        this.slots.size,
        this.leaseMs,
        this.options.recoverLimit,
      );
      this.lastHeartbeatOk = Date.now();
      for (const l of leases) {
        if (!hb.accepted.has(l.id)) this.loseLease(l.id, 'heartbeat');
      }
      const wasPaused = this.isPaused();
      this.operatorPaused = hb.paused;
      if (wasPaused && !this.isPaused()) this.waiter.wake();
      if (!hb.registered && !this.stopping) await this.register();
    } catch (err) {
      this.emitError(err);
      // Without a successful heartbeat for a whole lease, the database may
      // already have recovered our jobs: stop their handlers.
      if (Date.now() - this.lastHeartbeatOk > this.leaseMs) {
        for (const s of this.slots.values()) this.loseLease(s.job.id, 'heartbeat');
      }
    }
  }

  private loseLease(jobId: string, what: string): void {
    const slot = this.slots.get(jobId);
    if (!slot || slot.lost) return;
    slot.lost = true;
    const err = new StaleLeaseError(jobId, slot.job.execution, what);
    slot.controller.abort(err);
    if (!slot.started) {
      const i = this.buffer.findIndex((j) => j.id === jobId);
      if (i >= 0) this.buffer.splice(i, 1);
      this.slots.delete(jobId);
      slot.finish();
      this.events.emit('stale', err, slot.job);
    }
  }

  private emitError(err: unknown): void {
    if (this.events.listenerCount('error') > 0) this.events.emit('error', err);
    else console.error('[workhorse] worker error:', err);
  }
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

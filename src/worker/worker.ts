// The worker: a peer that registers, claims due jobs in batches, runs their
// handlers, heartbeats all its leases on one timer, settles in batches and
// deregisters. This is its public surface; the parts are WorkerCore (lease
// table, claim, heartbeat, executor, settler), RunLoop (the long-lived
// loop) and, for ticks, the tick pass (src/tick/tickPass.ts).
import { EventEmitter } from 'node:events';
import type { Client } from '../client/client.js';
import type { JobDefinition, PayloadOutput } from '../client/defineJob.js';
import { WorkerStoppedError } from '../errors.js';
import { OutboxPump } from '../outbox/outboxPump.js';
import type { SystemWorkerStarter } from '../schedules/slotRunner.js';
import { SYSTEM_QUEUE } from '../schedules/retention.js';
import type { SystemSlotConfig } from '../schedules/systemSchedules.js';
import { parseConfig } from '../validation.js';
import { WorkerCore } from './core.js';
import { HandlerRegistry } from './handlerRegistry.js';
import type { BatchHandler } from './invokeBatch.js';
import type { Handler } from './invokeHandler.js';
import { resolveWorkerOptions, workerOptionsSchema, type ResolvedWorkerOptions, type WorkerOptions } from './options.js';
import { RunLoop, type Companion } from './runLoop.js';
import { startScheduleCompanion } from './scheduleCompanion.js';
import { addSystemHandlers } from './systemHandlers.js';
import { Waiter } from './waiter.js';
import type { RuntimeState, WorkerEvents } from './workerTypes.js';

export type { Handler } from './invokeHandler.js';
export type { BatchHandler } from './invokeBatch.js';
export type { JobOutcome } from './settleJob.js';
export type { RuntimeState, WorkerEvents } from './workerTypes.js';

export class Worker {
  readonly options: ResolvedWorkerOptions;
  readonly events = new EventEmitter<WorkerEvents>();
  /** The handlers bound with handle() and handleBatch(); the tick pass reads them. */
  readonly handlers: HandlerRegistry;
  private readonly waiter = new Waiter();
  private readonly core: WorkerCore;
  private loop: RunLoop | undefined;
  private running: Promise<void> | undefined;
  private stopping = false;

  constructor(
    readonly client: Client,
    options: WorkerOptions = {},
  ) {
    this.options = resolveWorkerOptions(parseConfig(workerOptionsSchema, options, 'worker options'));
    this.handlers = new HandlerRegistry(client);
    const wake = (reason: 'slot' | 'hint') => this.waiter.wake(reason);
    this.core = new WorkerCore({ client, handlers: this.handlers, events: this.events, options: this.options, kind: 'process', deadline: null, wake });
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
    this.core.localPaused = true;
  }

  resume(): void {
    this.core.localPaused = false;
    this.waiter.wake();
  }

  isPaused(): boolean {
    return this.core.paused;
  }

  runtimeState(): RuntimeState {
    const { core } = this;
    return {
      workerId: this.workerId,
      registered: core.registered,
      running: Boolean(this.loop?.alive),
      stopping: this.stopping,
      paused: core.paused,
      localPaused: core.localPaused,
      operatorPaused: core.operatorPaused,
      active: core.table.running,
      buffered: core.table.buffered,
      concurrency: this.options.concurrency,
      activeJobIds: core.table.ids(),
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
    const { core, client, options, waiter, events } = this;
    const startSystem: SystemWorkerStarter = (id, pollMs, onError, system) => Worker.startSystemWorker(client, id, pollMs, onError, system);
    const startCompanion = () => startScheduleCompanion(client, options, (err) => core.emitError(err), startSystem);
    const loop = new RunLoop({ core, client, options, waiter, events, startCompanion });
    this.loop = loop;
    return (this.running = loop.run().finally(() => {
      this.running = this.loop = undefined;
    }));
  }

  /**
   * One claim-and-run pass: claims up to the free slots, runs every claimed
   * job to settlement, and returns whether it found work. Registers the
   * worker on first use; stop() deregisters it.
   */
  async runOnce(): Promise<boolean> {
    if (!this.core.registered) await this.core.register();
    this.core.startHeartbeat();
    if (this.stopping || this.core.paused) return false;
    const claimed = await this.core.claim();
    await Promise.all(claimed.map((l) => l.done()));
    await this.core.drain();
    return claimed.length > 0;
  }

  /** Aborts the signal of every handler that is running; they settle as failures. */
  abortActive(reason: unknown = new WorkerStoppedError()): void {
    this.core.abortRunning(reason);
  }

  /** Heartbeats now: one statement refreshes the registry row, extends every lease, recovers. */
  heartbeat(): Promise<void> {
    return this.core.beat();
  }

  /**
   * Drains and deregisters. With `{ hard: true }` it aborts every handler's
   * signal at once instead of waiting, and leaves their leases to recovery.
   */
  async stop(options: { hard?: boolean } = {}): Promise<void> {
    this.stopping = true;
    this.core.close();
    this.loop?.stop();
    this.waiter.wake();
    if (options.hard) {
      this.core.abandon();
      this.core.abortRunning(new WorkerStoppedError());
    }
    if (this.running && !options.hard) return this.running;
    if (!options.hard) await this.core.drain();
    await this.core.shutdown();
  }

  /**
   * A one-slot worker on the `sys` queue running the built-in sys.* jobs
   * (and, with sinks, the outbox pump that delivers right after each
   * commit); returns how to stop it.
   */
  static startSystemWorker(client: Client, workerId: string, pollMs: number, onError: (err: unknown) => void, system: SystemSlotConfig = {}): Companion {
    const worker = new Worker(client, { queue: SYSTEM_QUEUE, concurrency: 1, workerId, pollMs });
    addSystemHandlers(worker.handlers, client, system);
    worker.events.on('error', onError);
    const run = worker.run();
    const pump = system.outbox ? new OutboxPump(client, system.outbox, `${workerId}:pump`, onError) : undefined;
    pump?.start();
    return { stop: () => Promise.all([pump?.stop(), worker.stop().then(() => run)]).then(() => undefined) };
  }
}

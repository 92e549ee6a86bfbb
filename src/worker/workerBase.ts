// A worker without a loop of its own: its options, the handlers bound with
// handle() and handleBatch(), its events, and the WorkerCore that registers,
// claims, runs, heartbeats and settles (runOnce() drives it by hand). A tick
// binds the app's handlers to one of these and drives it with the tick pass
// (src/tick/tickPass.ts), so a tick bundle carries no long-lived loop;
// Worker (worker.ts) adds that loop (run()) and the system worker.
import { EventEmitter } from 'node:events';
import * as z from 'zod';
import type { Client } from '../client/client.js';
import { assertClient } from '../client/notAClient.js';
import type { JobDefinition, PayloadOutput } from '../client/defineJob.js';
import { ConfigError, WorkerStoppedError } from '../errors.js';
import { checkScheduleJobs, jobAsType } from '../schedules/appSchedules.js';
import { parseConfig, parseInput } from '../validation.js';
import { WorkerCore } from './core.js';
import { HandlerRegistry } from './handlerRegistry.js';
import type { BatchHandler } from './invokeBatch.js';
import type { Handler } from './invokeHandler.js';
import { resolveWorkerOptions, workerOptionsSchema, type ResolvedWorkerOptions, type WorkerOptions } from './options.js';
import { Waiter } from './waiter.js';
import type { RuntimeState, WorkerEvents } from './workerTypes.js';

/** What run() and runOnce() say after stop(): its claims, handlers and settlements are closed for good. */
export const STOPPED_WORKER = 'this Worker was stopped, and a Worker runs once: create another (new Worker(client, options)) to run again';

/** What stop() takes: `{ hard }` or `{ timeoutMs }` (a drain that turns hard when it passes), and nothing else. */
const stopOptionsSchema = z
  .object({ hard: z.boolean().optional(), timeoutMs: z.number().int().min(0).max(2_147_483_647).optional() })
  .strict()
  .refine((o) => !(o.hard && o.timeoutMs !== undefined), { message: 'give hard or timeoutMs, not both', path: ['timeoutMs'] });

export class WorkerBase {
  readonly options: ResolvedWorkerOptions;
  readonly events = new EventEmitter<WorkerEvents>();
  /** The handlers bound with handle() and handleBatch(); the tick pass reads them. */
  readonly handlers: HandlerRegistry;
  protected readonly waiter = new Waiter();
  protected readonly core: WorkerCore;
  protected stopping = false;

  constructor(
    readonly client: Client,
    options: WorkerOptions = {},
  ) {
    assertClient(client, 'a Worker');
    this.options = resolveWorkerOptions(parseConfig(workerOptionsSchema, options, 'worker options'));
    // A schedule its client cannot store (an unknown job type, a definition the client does not have, a payload its job refuses) fails here, not after run() started.
    checkScheduleJobs(this.options.schedules, jobAsType, (t) => client.definition(t), client.maxPayloadBytes, 'worker options');
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
    this.handlers.addBatchHandler(job, fn, options);
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
      running: this.loopAlive(),
      stopping: this.stopping,
      paused: core.paused,
      localPaused: core.localPaused,
      operatorPaused: core.operatorPaused,
      active: core.table.running,
      settling: core.table.settling,
      buffered: core.table.buffered,
      concurrency: this.options.concurrency,
      activeJobIds: core.table.ids(),
      droppedOutcomes: core.droppedOutcomes,
      heartbeatFailingMs: core.heartbeatFailingMs,
    };
  }

  /**
   * One claim-and-run pass: claims up to the free slots, runs every claimed
   * job to settlement, and returns whether it found work. Registers the
   * worker on first use; stop() deregisters it.
   */
  async runOnce(): Promise<boolean> {
    // Registering again after stop() would leave a registry row and a heartbeat behind, and claim nothing.
    if (this.stopping) throw new ConfigError(STOPPED_WORKER);
    if (!this.core.registered) await this.core.register();
    // Stopped while it registered: stop() deregisters; no heartbeat is started after it.
    if (this.stopping) return false;
    this.core.startHeartbeat();
    if (this.core.paused) return false;
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
   * signal at once instead of waiting: each attempt ends as a
   * WorkerStoppedError (retried with backoff), and what cannot be written
   * (the database is down) is left to lease recovery. With `{ timeoutMs }`
   * it drains for at most that long, then stops hard; deregistration
   * against a hung server is bounded on its own (20 s).
   */
  async stop(options: { hard?: boolean; timeoutMs?: number } = {}): Promise<void> {
    // Checked before anything stops: a misspelt `hard` must not turn into a drain.
    options = parseInput(stopOptionsSchema, options, 'stop options');
    if (options.timeoutMs !== undefined) {
      const timer = setTimeout(() => void this.stop({ hard: true }).catch(() => undefined), options.timeoutMs);
      try {
        return await this.stop();
      } finally {
        clearTimeout(timer);
      }
    }
    this.stopping = true;
    this.core.close();
    const loop = this.stopLoop(options.hard === true);
    this.waiter.wake();
    if (options.hard) {
      this.core.abandon();
      this.core.abortRunning(new WorkerStoppedError());
    }
    if (loop && !options.hard) return loop;
    if (!options.hard) await this.core.drain();
    await this.core.shutdown();
  }

  /** Whether a loop of the subclass's is running (none here). */
  protected loopAlive(): boolean {
    return false;
  }

  /** Tells the subclass's loop to stop (`hard`: its companions too); returns its run() promise, which drains and deregisters. */
  protected stopLoop(_hard: boolean): Promise<void> | undefined {
    return undefined;
  }
}

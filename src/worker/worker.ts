// The worker: a peer that registers, claims due jobs in batches, runs their
// handlers, heartbeats all its leases on one timer, settles in batches and
// deregisters. This is its public surface; the parts are WorkerBase (the
// handlers, events and WorkerCore: lease table, claim, heartbeat, executor,
// settler), RunLoop (the long-lived loop, here) and, for ticks, the tick
// pass (src/tick/tickPass.ts), which drives a WorkerBase instead.
import type { Client } from '../client/client.js';
import { ConfigError, ValidationError } from '../errors.js';
import { OutboxPump } from '../outbox/outboxPump.js';
import type { SystemFaults, SystemWorkerStarter } from '../schedules/slotRunner.js';
import { SYSTEM_QUEUE } from '../schedules/retention.js';
import type { SystemSlotConfig } from '../schedules/systemSchedules.js';
import { RunLoop, type Companion } from './runLoop.js';
import { startScheduleCompanion } from './scheduleCompanion.js';
import { unclaimedHandlerLines } from './unclaimedHandlers.js';
import { addSystemHandlers } from './systemHandlers.js';
import { STOPPED_WORKER, WorkerBase } from './workerBase.js';
import { MAX_POLL_MS } from './options.js';
import { workerFaultReporter } from './reportError.js';

export type { Handler } from './invokeHandler.js';
export type { BatchHandler } from './invokeBatch.js';
export type { JobOutcome } from './settleJob.js';
export type { RuntimeState, WorkerEvents } from './workerTypes.js';

/** The longest a stopping system worker waits for a sys.* job to finish before it aborts it (a sink that never answers held the stop for ever). */
const SYSTEM_DRAIN_MS = 5_000;

export class Worker extends WorkerBase {
  private loop: RunLoop | undefined;
  private running: Promise<void> | undefined;

  /**
   * Runs until `signal` aborts or stop() is called, then drains: no new
   * claims, active handlers finish, settlements are written, the worker
   * deregisters and run() resolves.
   */
  run(signal?: AbortSignal): Promise<void> {
    if (signal !== undefined && !(signal instanceof AbortSignal)) {
      return Promise.reject(new ValidationError('run() takes an AbortSignal (or nothing)', [{ path: ['signal'], message: 'signal must be an AbortSignal' }]));
    }
    if (this.running) return this.running;
    // Its claims, handlers and settlements were closed by stop(): run again, it would register and heartbeat but never claim.
    if (this.stopping) {
      return Promise.reject(new ConfigError(STOPPED_WORKER));
    }
    // Aborted already: the worker is stopped as an abort during run() stops it (it runs once), not left usable.
    if (signal?.aborted) return this.stop();
    signal?.addEventListener('abort', () => void this.stop(), { once: true });
    const { core, client, options, waiter, events } = this;
    for (const line of unclaimedHandlerLines(this.handlers, options.queues, options.workerId, options.scheduleNamespaces)) console.warn(line);
    // The system worker beats like this one: with the default 45 s its calls waited a 180 s lease on a frozen connection.
    // And it carries this worker's build: an operator reads the fleet's builds from the registry in a rolling deploy.
    const startSystem: SystemWorkerStarter = (id, pollMs, faults, system) => Worker.startSystemWorker(client, id, pollMs, faults, system, options.heartbeatMs, options.build);
    // The companion's loops (schedules, system worker, outbox): an `error` event per failure, else a line when a fault begins and one when it ends.
    const faults = workerFaultReporter(events, options.workerId);
    const startCompanion = () => startScheduleCompanion(client, options, faults, startSystem);
    const loop = new RunLoop({ core, client, options, waiter, events, startCompanion });
    this.loop = loop;
    return (this.running = loop.run().finally(() => {
      this.running = this.loop = undefined;
    }));
  }

  protected override loopAlive(): boolean {
    return Boolean(this.loop?.alive);
  }

  protected override stopLoop(hard: boolean): Promise<void> | undefined {
    this.loop?.stop(hard);
    return this.running;
  }

  /**
   * A two-slot worker on the `sys` queue running the built-in sys.* jobs
   * (and, with sinks, the outbox pump that delivers right after each
   * commit); returns how to stop it.
   */
  static startSystemWorker(
    client: Client,
    workerId: string,
    pollMs: number,
    faults: SystemFaults,
    system: SystemSlotConfig = {},
    heartbeatMs?: number,
    build?: string,
  ): Companion {
    const worker = new Worker(client, {
      queue: SYSTEM_QUEUE,
      // Two slots: a sys.outbox run a sink holds (up to its lease) leaves the other to sys.alerts and
      // sys.retention, which waited behind it, so no alert was evaluated during the very incident. At most
      // one job of each sys type is unfinished at a time (fire_slots_v1), so two outbox runs never take both.
      concurrency: 2,
      workerId,
      // A runner's interval may be longer than a worker's longest poll (an hour against 10 minutes).
      pollMs: Math.min(pollMs, MAX_POLL_MS),
      ...(heartbeatMs === undefined ? {} : { heartbeatMs }),
      ...(build === undefined ? {} : { build }),
    });
    addSystemHandlers(worker.handlers, client, system, () => worker.core.lastBlindSpell());
    worker.events.on('error', (err) => faults.worker.failed(err));
    const run = worker.run();
    const pump = system.outbox ? new OutboxPump(client, system.outbox, `${workerId}:pump`, faults.outbox) : undefined;
    pump?.start();
    // Its jobs can be run again: a stop drains them for at most SYSTEM_DRAIN_MS, and a hard one aborts them at once.
    const stop = (hard?: boolean) => worker.stop(hard ? { hard: true } : { timeoutMs: SYSTEM_DRAIN_MS }).then(() => run);
    return { stop: (hard) => Promise.all([pump?.stop(), stop(hard)]).then(() => undefined) };
  }
}

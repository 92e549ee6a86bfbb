// The long-lived worker's loop: wait for the database (a worker started
// while it is down waits for it), register, start the heartbeat, the
// registry refresh, the wake listeners (LISTEN, and Redis when the client
// has it) and any companions (the schedule runner); then look for work
// whenever enough room is free and sleep until a wake-up, the next delayed
// job's due time or the safety poll; on stop, drain the started handlers
// and deregister. A database fault never ends the loop: claims back off
// (capped) and try again. A schema of another version found under the
// running loop (a claim, the next-due read or the registry refresh naming a
// SchemaVersionError) does: no retry can fix it, so the loop stops claiming,
// drains and run() rejects with it.
//
// The wake path: a hint from another process (NOTIFY or Redis) or a due
// time claims after a short random stagger when peers share the queues, so
// idle workers do not all hit the same rows at once. A look that finds
// nothing more to claim reads when the next delayed job comes due (when
// no hint announced it) and the loop wakes then. Without an active
// listener, consecutive empty polls back off (capped at maxPollMs) and the
// first successful claim resets the delay.
import type { EventEmitter } from 'node:events';
import type pg from 'pg';
import type { Client } from '../client/client.js';
import type { WakeHint, WakeSubscription } from '../client/wakeHints.js';
import { GuardedDb } from '../db/guardedDb.js';
import { Backoff, pause } from '../db/retryTransient.js';
import { ClientClosedError, ConfigError, SchemaVersionError, ValidationError } from '../errors.js';
import { unlessAborted } from '../boundedWait.js';
import { claimThreshold } from './claimBatching.js';
import type { WorkerCore } from './core.js';
import { DEFAULT_REGISTRY_INTERVAL_MS, type ResolvedWorkerOptions } from './options.js';
import type { FaultReport } from '../faultSpell.js';
import { RegistryRefresher } from './registryRefresh.js';
import type { Waiter, WakeReason } from './waiter.js';
import { WakeListener } from './wakeListener.js';
import type { WorkerEvents } from './workerTypes.js';
import type { JobOutcome } from './settleJob.js';
import { workerFaultReporter } from './reportError.js';

/** The longest wait between claims while the database is failing. */
const CLAIM_BACKOFF_MAX_MS = 5_000;

/** Something that runs beside the loop while it runs (the schedule runner). */
export interface Companion {
  /** Stops it: `hard` as the worker's own stop (called again with true when a drain turns hard). */
  stop(hard?: boolean): Promise<void>;
}

export interface RunLoopSetup {
  core: WorkerCore;
  client: Client;
  options: ResolvedWorkerOptions;
  waiter: Waiter;
  events: EventEmitter<WorkerEvents>;
  startCompanion(): Promise<Companion | undefined>;
}

/**
 * The refresh timer's interval. Each heartbeat refreshes the row and reads
 * the pause too, so when registryIntervalMs is not shorter than the
 * heartbeat the timer only keeps the peer count fresh, every 5 s.
 */
function refreshIntervalMs(o: ResolvedWorkerOptions): number {
  return o.registryIntervalMs < o.heartbeatMs ? o.registryIntervalMs : Math.max(o.registryIntervalMs, DEFAULT_REGISTRY_INTERVAL_MS);
}

/** Errors no retry can fix: the loop gives up on them at start-up. */
function fatalAtStart(err: unknown): boolean {
  return err instanceof SchemaVersionError || err instanceof ConfigError || err instanceof ValidationError || err instanceof ClientClosedError;
}

export class RunLoop {
  private readonly halt = new AbortController();
  private readonly listeners: WakeSubscription[] = [];
  private refresher: RegistryRefresher | undefined;
  private companion: Companion | undefined;
  /** The worker is stopping hard: so does the companion. */
  private hard = false;
  private claimFailures = 0;
  /** Consecutive empty safety polls (the listener-less backoff). */
  private emptyPolls = 0;
  /** Live peers sharing a queue, from the registry refresh; unknown counts as some. */
  private peers = 1;
  /** A delayed job may exist that no hint announced: read the next due time after the next look. */
  private dueUnknown = true;
  /** The last claim came back with fewer jobs than it asked for (an empty queue, or a gate held by a job still settling). */
  private shortClaim = false;
  private started = false;
  private ended = false;
  /** Set when the client was closed under the running loop: nothing can be claimed, settled or deregistered any more. */
  private closedBy: ClientClosedError | undefined;
  /** Set when a call found the schema at another version under the running loop: no retry can fix it. */
  private schemaMoved: SchemaVersionError | undefined;

  /**
   * The claim's, the registry refresh's and the wake listener's database
   * faults: an `error` event per failure, or a log line when one begins
   * (and per other kind of error) and one when it ends, not one per try.
   */
  private readonly claimFaults: FaultReport;
  private readonly refreshFaults: FaultReport;
  private readonly listenerFaults: FaultReport;

  constructor(private readonly s: RunLoopSetup) {
    const faults = workerFaultReporter(s.events, s.options.workerId);
    this.claimFaults = faults('claim');
    this.refreshFaults = faults('registry refresh (dispatch goes on and the last pause decision stands)');
    this.listenerFaults = faults('wake listener (the safety poll covers the gap until it is back)');
  }

  /** Ends the loop: no new claims; run() then drains and deregisters. `hard`: the companion stops hard too, now if it is stopping already. */
  stop(hard = false): void {
    if (hard && !this.hard) {
      this.hard = true;
      if (this.halt.signal.aborted) void this.companion?.stop(true).catch(() => undefined);
    }
    this.halt.abort();
    this.s.waiter.wake();
  }

  /** Whether the loop has started and not ended. */
  get alive(): boolean {
    return this.started && !this.ended;
  }

  /**
   * A job this worker retried comes due later, and nobody announces it: the
   * loop asks when. A job that stopped running (succeeded, failed, retried,
   * suspended) released its concurrency gate: its key, or its place under its
   * queue's concurrency limit. A claim that came back short ran while that
   * settlement was still being written (settlements are written in batches)
   * and was refused for the gate, and nothing announces the job it held back:
   * look again now rather than at the safety poll.
   */
  private onSettled = (o: JobOutcome): void => {
    if (o.status === 'retried') this.dueUnknown = true;
    else if (o.status === 'stale' || !this.shortClaim) return;
    this.shortClaim = false;
    this.s.waiter.wake('slot');
  };

  async run(): Promise<void> {
    const { core, waiter, events } = this.s;
    this.started = true;
    events.on('settled', this.onSettled);
    try {
      if (!(await this.startPatiently())) return;
      if (!(await this.startCompanionPatiently())) return;
      let reason: WakeReason = 'hint';
      while (!this.halt.signal.aborted) {
        // A stop does not wait for a look held by a hung server (core.shutdown bounds what it still waits for).
        const next: WakeReason | undefined = await unlessAborted(this.look(reason), this.halt.signal);
        reason = next ?? (await waiter.wait(this.pollIntervalMs()));
      }
      if (this.closedBy) throw this.closedBy;
      await core.drain();
      if (this.schemaMoved) throw this.schemaMoved;
    } finally {
      // The companion (slot runner, system worker) stops beside this worker, not before it: against a
      // hung server each waits out its own shutdown bound, and one after the other doubled the stop.
      const stopped = await Promise.allSettled([
        this.companion?.stop(this.hard),
        (async () => {
          await Promise.all(this.listeners.map((l) => l.close()));
          await this.refresher?.stop();
          await core.shutdown();
        })(),
      ]);
      events.off('settled', this.onSettled);
      this.ended = true;
      for (const r of stopped) if (r.status === 'rejected') throw r.reason;
    }
  }

  /**
   * One look at the database: maybe claim, maybe read when the next delayed
   * job comes due. Returns a reason to look again at once, or undefined to
   * wait (until a wake-up, a due time or the poll).
   */
  private async look(reason: WakeReason): Promise<WakeReason | undefined> {
    const { core, options, waiter } = this.s;
    if ((reason === 'notify' || reason === 'due') && this.peers > 0 && options.staggerMs > 0) {
      await pause(Math.random() * options.staggerMs, this.halt.signal);
      if (this.halt.signal.aborted) return undefined;
    }
    try {
      // A client closed under the loop (client.close() before worker.stop()) fails every call from now on.
      await this.s.client.ready();
      if (core.paused || core.freeRoom < claimThreshold(options, reason, core.table.size === 0)) return undefined;
      const want = core.freeRoom;
      const got = await core.claim();
      this.claimFailures = 0;
      this.claimFaults.ok();
      this.shortClaim = got.length < want;
      if (got.length > 0) this.emptyPolls = 0;
      else if (reason === 'timeout') this.emptyPolls++;
      // Every free slot filled: more may be due; the next freed slots claim again. A due time's (or the
      // poll's) claim that filled them has used up the wake-up it came from: the next delayed job's due
      // time is unknown until asked, or a look that finds nothing waited for the safety poll.
      if (got.length > 0 && got.length === want) {
        if (reason === 'due' || reason === 'timeout') this.dueUnknown = true;
        return 'slot';
      }
      if (reason === 'timeout' || reason === 'due' || this.dueUnknown) await this.readNextDue();
      return undefined;
    } catch (err) {
      if (err instanceof ClientClosedError) {
        this.stopClosed(err);
        return undefined;
      }
      if (this.endsOnSchema(err)) return undefined;
      // A database fault: back off (capped) instead of polling a dead server.
      const delay = Math.min(CLAIM_BACKOFF_MAX_MS, 100 * 2 ** Math.min(this.claimFailures++, 10));
      this.claimFaults.failed(err);
      return waiter.wait(Math.max(delay, 1));
    }
  }

  /**
   * The client was closed while the loop ran: a hard stop. Running handlers
   * are aborted and settlement retries give up (their leases expire and
   * recovery returns the jobs); run() then rejects with the ClientClosedError
   * instead of retrying the closed client forever.
   */
  private stopClosed(err: ClientClosedError): void {
    const { core } = this.s;
    this.closedBy = err;
    core.close();
    core.abandon();
    core.abortRunning(err);
    this.halt.abort();
  }

  /**
   * A schema of another version under the running loop (newer code migrated
   * it, or it was rolled back): every claim would fail the same way, so
   * instead of retrying it for ever the loop stops claiming, drains, and
   * run() rejects with the SchemaVersionError (`workhorse worker` exits 1).
   */
  private endsOnSchema(err: unknown): boolean {
    if (!(err instanceof SchemaVersionError)) return false;
    this.schemaMoved ??= err;
    this.halt.abort();
    this.s.waiter.wake();
    return true;
  }

  /** Sets the due-time wake-up from the database's answer (looking as far ahead as the coming wait). */
  private async readNextDue(): Promise<void> {
    const { core, waiter } = this.s;
    try {
      const ms = await core.nextDue(this.pollIntervalMs());
      this.dueUnknown = false;
      if (ms !== null) waiter.wakeAt(Date.now() + ms);
    } catch (err) {
      if (this.endsOnSchema(err)) return;
      core.emitError(err, 'could not read when the next delayed job comes due; the safety poll covers it');
    }
  }

  /** The safety poll: fixed while a listener is active; otherwise doubled per empty poll, capped. */
  private pollIntervalMs(): number {
    const { pollMs, maxPollMs } = this.s.options;
    if (this.listeners.some((l) => l.active)) return pollMs;
    return Math.min(maxPollMs, pollMs * 2 ** Math.min(this.emptyPolls, 20));
  }

  private onHint = (hint: WakeHint): void => {
    if (hint.dueInMs <= 0) this.s.waiter.wake('notify');
    else this.s.waiter.wakeAt(Date.now() + hint.dueInMs);
  };

  private onReconnect = (): void => {
    this.dueUnknown = true;
    this.s.waiter.wake('notify');
  };

  /**
   * Starts the companion (the slot runner stores its schedules first),
   * waiting out a failure the way registration does: a database fault there
   * must not end the worker. A schema or configuration error still does.
   * Returns false when stopped before it could start.
   */
  private async startCompanionPatiently(): Promise<boolean> {
    const backoff = new Backoff({ baseMs: 250, maxMs: 10_000 });
    for (;;) {
      try {
        this.companion = await this.s.startCompanion();
        return true;
      } catch (err) {
        if (fatalAtStart(err)) throw err;
        if (this.halt.signal.aborted) return false;
        const ms = backoff.next();
        this.s.core.emitError(err, `cannot start the schedule runner; retrying in ${ms} ms`);
        await pause(ms, this.halt.signal);
        if (this.halt.signal.aborted) return false;
      }
    }
  }

  /**
   * Registers, waiting out any failure but a schema or configuration error
   * (capped backoff with jitter, one log line per failure) until it
   * succeeds or the loop is stopped; then starts the timers and listeners.
   * Returns false when stopped before it could start.
   */
  private async startPatiently(): Promise<boolean> {
    const { core, client, options } = this.s;
    const backoff = new Backoff({ baseMs: 250, maxMs: 10_000 });
    for (;;) {
      try {
        await core.register();
        break;
      } catch (err) {
        if (fatalAtStart(err)) throw err;
        if (this.halt.signal.aborted) return false;
        const ms = backoff.next();
        core.emitError(err, `cannot register; retrying in ${ms} ms`);
        await pause(ms, this.halt.signal);
        if (this.halt.signal.aborted) return false;
      }
    }
    core.startHeartbeat();
    this.refresher = new RegistryRefresher({
      protocol: client.protocol,
      db: new GuardedDb(client.pool, { timeoutMs: Math.max(1_000, options.registryIntervalMs) }),
      namespace: client.namespace,
      workerId: options.workerId,
      intervalMs: refreshIntervalMs(options),
      active: () => core.table.running,
      onResult: async (r) => {
        this.refreshFaults.ok();
        this.peers = r.peers;
        await core.applyRegistry(r);
      },
      onError: (err) => {
        if (!this.endsOnSchema(err)) this.refreshFaults.failed(err);
      },
    });
    this.refresher.start();
    if (options.listen) {
      const config = (client.pool as unknown as { options: pg.ClientConfig }).options;
      const listener = new WakeListener(
        config,
        client.namespace,
        options.queues,
        this.onHint,
        () => {
          this.listenerFaults.ok();
          this.onReconnect();
        },
        (err) => this.listenerFaults.failed(err),
      );
      listener.start();
      this.listeners.push(listener);
    }
    if (client.wakeHints) this.listeners.push(client.wakeHints.subscribe(client.namespace, options.queues, this.onHint, this.onReconnect));
    return true;
  }
}

// The long-lived worker's loop: wait for the database (a worker started
// while it is down waits for it), register, start the heartbeat, the wake
// listener and any companions (the schedule runner), then claim whenever
// enough room is free and sleep until a wake-up or the safety poll; on stop,
// drain the started handlers and deregister. A database fault never ends
// the loop: claims back off (capped) and try again.
import type pg from 'pg';
import type { Client } from '../client/client.js';
import { retryTransient } from '../db/retryTransient.js';
import { isTransientDbError } from '../db/transient.js';
import { claimThreshold } from './claimBatching.js';
import type { WorkerCore } from './core.js';
import type { ResolvedWorkerOptions } from './options.js';
import type { Waiter, WakeReason } from './waiter.js';
import { WakeListener } from './wakeListener.js';

/** The longest wait between claims while the database is failing. */
const CLAIM_BACKOFF_MAX_MS = 5_000;

/** Something that runs beside the loop while it runs (the schedule runner). */
export interface Companion {
  stop(): Promise<void>;
}

export interface RunLoopSetup {
  core: WorkerCore;
  client: Client;
  options: ResolvedWorkerOptions;
  waiter: Waiter;
  startCompanion(): Promise<Companion | undefined>;
}

export class RunLoop {
  private readonly halt = new AbortController();
  private listener: WakeListener | undefined;
  private companion: Companion | undefined;
  private claimFailures = 0;

  constructor(private readonly s: RunLoopSetup) {}

  /** Ends the loop: no new claims; run() then drains and deregisters. */
  stop(): void {
    this.halt.abort();
    this.s.waiter.wake();
  }

  async run(): Promise<void> {
    const { core, waiter, options } = this.s;
    try {
      if (!(await this.startPatiently())) return;
      this.companion = await this.s.startCompanion();
      let reason: WakeReason = 'hint';
      while (!this.halt.signal.aborted) {
        if (!core.paused && core.freeRoom >= claimThreshold(options, reason, core.table.size === 0)) {
          try {
            const want = core.freeRoom;
            const got = await core.claim();
            this.claimFailures = 0;
            if (got.length > 0 && got.length === want) {
              reason = 'slot';
              continue;
            }
          } catch (err) {
            // A database fault: back off (capped) instead of polling a dead server.
            const delay = Math.min(CLAIM_BACKOFF_MAX_MS, 100 * 2 ** Math.min(this.claimFailures++, 10));
            core.emitError(err, `claim failed; retrying in ${delay} ms`);
            reason = await waiter.wait(Math.max(delay, 1));
            continue;
          }
        }
        reason = await waiter.wait(options.pollMs);
      }
      await core.drain();
    } finally {
      await this.companion?.stop();
      await this.listener?.close();
      await core.shutdown();
    }
  }

  /**
   * Registers, waiting out database faults (capped backoff with jitter, one
   * log line per failure) until it succeeds or the loop is stopped. A schema
   * mismatch or any other error rejects at once. Returns false when stopped
   * before it could start.
   */
  private async startPatiently(): Promise<boolean> {
    const { core, client, options, waiter } = this.s;
    try {
      await retryTransient(() => core.register(), {
        signal: this.halt.signal,
        baseMs: 250,
        maxMs: 10_000,
        onRetry: (err, ms) => core.emitError(err, `cannot reach the database; retrying in ${ms} ms`),
      });
    } catch (err) {
      if (this.halt.signal.aborted && isTransientDbError(err)) return false;
      throw err;
    }
    core.startHeartbeat();
    if (options.listen) {
      const config = (client.pool as unknown as { options: pg.ClientConfig }).options;
      this.listener = new WakeListener(
        config,
        client.namespace,
        new Set(options.queues),
        () => waiter.wake(),
        (err) => core.emitError(err, 'wake listener cannot connect; the safety poll covers the gap'),
      );
      this.listener.start();
    }
    return true;
  }
}

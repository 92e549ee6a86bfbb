// The tick's claim loop, inside one time window the tick's plan fixes:
// claims stop at `claimUntil` (only jobs that fit the time left before it
// are claimed) and handlers still running at `abortAt` are aborted. It runs
// a worker core of kind `tick` built from the app's configured worker (its
// handlers, options and events). Free slots are refilled as handlers
// finish (once enough are free for a worthwhile batch, the long-lived
// worker's rule), so one slow job never holds the others back; the pass
// ends when a claim finds nothing and nothing is running (or, with
// untilEmpty off, when the window closes). After the first full batch has
// finished it decides on fan-out; invocations still unanswered when handlers
// are aborted are given up, so the tick still returns before its deadline.
// A stop signal (the tick's `signal`) ends claiming as the window's close does,
// and so does a claim the database did not take (claimFault).
import type { Client } from '../client/client.js';
import { isOperatorFixable } from '../db/operatorFixable.js';
import { isTransientDbError } from '../db/transient.js';
import { FanoutFailedError, TickDeadlineError } from '../errors.js';
import { claimThreshold } from '../worker/claimBatching.js';
import { WorkerCore } from '../worker/core.js';
import type { Lease } from '../worker/leaseTable.js';
import { Waiter, type WakeReason } from '../worker/waiter.js';
import type { WorkerBase } from '../worker/workerBase.js';
import { backlogCap, fanoutCount, invokeTicks, mayFanOut } from './fanout.js';
import type { ResolvedTickOptions } from './options.js';
import type { TickSummary } from './summary.js';

export interface TickWindow {
  /** When the tick started (fan-out sizes a whole tick's span from it). */
  startedAt: number;
  /** Claims stop here; a job is claimed only if it fits before it. */
  claimUntil: number;
  /** Handlers still running here are aborted (TickDeadlineError). */
  abortAt: number;
  /** No database call outlasts this instant (shortly before the deadline), so the tick returns in time against a hung server. */
  callsEndBy: number;
}

export class TickPass {
  readonly core: WorkerCore;
  private readonly abortTimer: NodeJS.Timeout;
  /** Woken when a handler's slot comes free. */
  private readonly waiter = new Waiter();
  /** Set when the pass fans out; awaited before the tick closes its pool. */
  fanout: Promise<void> = Promise.resolve();
  /** A claim the database did not take: the pass stopped claiming, and the tick fails with it once its handlers are done. */
  claimFault: unknown = undefined;

  constructor(
    private readonly client: Client,
    private readonly worker: WorkerBase,
    private readonly window: TickWindow,
    private readonly o: ResolvedTickOptions,
    private readonly summary: TickSummary,
    private readonly log: (line: string, err?: unknown) => void,
  ) {
    this.core = new WorkerCore({
      client,
      handlers: worker.handlers,
      events: worker.events,
      options: worker.options,
      kind: 'tick',
      // Handlers see the instant they are aborted as their deadline.
      deadline: new Date(window.abortAt),
      callsEndBy: window.callsEndBy,
      wake: (reason) => this.waiter.wake(reason),
      // A lost lease's line goes where the tick's other lines go.
      log: (line) => log(line),
    });
    this.abortTimer = setTimeout(() => this.core.abortRunning(new TickDeadlineError()), Math.max(0, window.abortAt - Date.now()));
    o.signal?.addEventListener('abort', () => this.waiter.wake('hint'), { once: true });
  }

  /** Whether claims may go on: the window is open and the tick was not told to stop. */
  private claiming(): boolean {
    return Date.now() < this.window.claimUntil && !this.o.signal?.aborted;
  }

  /** Milliseconds a job claimed now may take. */
  private claimableMs(): number {
    return Math.floor(this.window.claimUntil - Date.now());
  }

  async run(): Promise<void> {
    const { core } = this;
    core.startHeartbeat();
    let decided = false;
    let reason: WakeReason = 'hint';
    while (this.claiming()) {
      const idle = core.table.size === 0;
      if (!core.paused && core.freeRoom >= claimThreshold(this.worker.options, reason, idle)) {
        const t0 = Date.now();
        let claimed: Lease[];
        try {
          claimed = await core.claim(this.claimableMs());
        } catch (err) {
          if (!isTransientDbError(err) && !isOperatorFixable(err)) throw err;
          // The database did not take this claim (a refused connection, a reset, the runtime role's grants
          // revoked for a moment): claiming ends, and the handlers running finish and settle (their writes
          // retried until the tick's calls end); the tick then fails with this fault. It used to stop hard at
          // once, aborting handlers that would have succeeded (a refusal an operator ends did so still: the
          // outcomes were given up and jobs of maxAttempts 1 ended failed).
          this.claimFault = err;
          break;
        }
        // A settled lease wakes the loop too: the last one ends the pass at once.
        for (const l of claimed) void l.done().then(() => this.waiter.wake('slot'));
        // Told to stop while the claim was out: what it took runs and settles like any claimed job.
        if (this.o.signal?.aborted) break;
        if (claimed.length > 0 && !decided) {
          decided = true;
          if (claimed.length >= this.o.concurrency) this.decideFanout(claimed, t0);
        }
        if (claimed.length === 0 && core.table.size === 0) {
          if (this.o.untilEmpty) break;
          reason = await this.waiter.wait(Math.max(0, Math.min(this.o.pollMs, this.window.claimUntil - Date.now())));
          continue;
        }
      } else if (core.paused && idle && this.o.untilEmpty) {
        break;
      }
      // Handlers are running: claim again once slots come free (or the window closes).
      reason = await this.waiter.wait(Math.max(0, Math.min(this.o.pollMs, this.window.claimUntil - Date.now())));
    }
  }

  /** Once the first full batch has finished, its duration sizes the fan-out (in the background). */
  private decideFanout(batch: Lease[], t0: number): void {
    this.fanout = Promise.all(batch.map((l) => l.done()))
      .then(() => this.fanOut(Date.now() - t0))
      .catch((err: unknown) => this.log('[workhorse] tick fan-out failed:', err));
  }

  /**
   * Drains and deregisters; `hard` aborts handlers and gives settlement
   * retries up. `reason`: what the handlers' signals abort with (the error
   * that failed the tick; by default the deadline's TickDeadlineError).
   */
  async stop(hard: boolean, reason: unknown = new TickDeadlineError()): Promise<void> {
    this.core.close();
    if (hard) {
      this.core.abandon();
      this.core.abortRunning(reason);
    } else {
      // Handlers still running at abortAt are aborted while this waits.
      await this.core.drain();
    }
    clearTimeout(this.abortTimer);
    await this.core.shutdown();
  }

  private async fanOut(batchMs: number): Promise<void> {
    const o = this.o;
    if (!mayFanOut(o)) return;
    const now = Date.now();
    const shape = {
      concurrency: o.concurrency,
      batchMs,
      msUntilClose: this.window.claimUntil - now,
      tickSpanMs: this.window.claimUntil - this.window.startedAt,
      maxFanout: o.maxFanout,
    };
    // Jobs a fresh tick could claim: their timeout fits a whole tick's claiming span.
    const { client } = this;
    const backlog = await client.protocol.countReady(this.core.boundedDb, client.namespace, this.worker.options.queues, this.worker.types, shape.tickSpanMs, backlogCap(shape));
    const count = fanoutCount({ ...shape, backlog });
    if (count === 0) return;
    const r = await invokeTicks({
      functionName: o.fanoutFunction,
      generation: o.generation + 1,
      count,
      lambda: o.lambda,
      endpoint: o.lambdaEndpoint,
      // The tick awaits the fan-out before it closes: it must be over when the margin's second half begins.
      signal: AbortSignal.timeout(Math.max(0, this.window.abortAt - Date.now())),
    });
    this.summary.fannedOut += r.accepted;
    // One line in the tick's log (an AggregateError of the SDK's errors printed 57 lines of their stacks).
    if (r.errors.length > 0) throw new FanoutFailedError(r.errors.length, count, r.errors);
  }
}

// The tick's claim loop, inside one time window the tick's plan fixes:
// claims stop at `claimUntil` (only jobs that fit the time left before it
// are claimed) and handlers still running at `abortAt` are aborted. It runs
// a worker core of kind `tick` built from the app's configured Worker (its
// handlers, options and events) and claims and runs batches until the
// queues are empty (or, with untilEmpty off, until the window closes).
// After the first full batch it decides on fan-out.
import type { Client } from '../client/client.js';
import { TickDeadlineError } from '../errors.js';
import { WorkerCore } from '../worker/core.js';
import type { Worker } from '../worker/worker.js';
import { backlogCap, fanoutCount, invokeTicks } from './fanout.js';
import type { ResolvedTickOptions } from './options.js';
import type { TickSummary } from './summary.js';

export interface TickWindow {
  /** When the tick started (fan-out sizes a whole tick's span from it). */
  startedAt: number;
  /** Claims stop here; a job is claimed only if it fits before it. */
  claimUntil: number;
  /** Handlers still running here are aborted (TickDeadlineError). */
  abortAt: number;
}

export class TickPass {
  readonly core: WorkerCore;
  private readonly abortTimer: NodeJS.Timeout;
  /** Set when the pass fans out; awaited before the tick closes its pool. */
  fanout: Promise<void> = Promise.resolve();

  constructor(
    private readonly client: Client,
    private readonly worker: Worker,
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
      wake: () => undefined,
    });
    this.abortTimer = setTimeout(() => this.core.abortRunning(new TickDeadlineError()), Math.max(0, window.abortAt - Date.now()));
  }

  /** Milliseconds a job claimed now may take. */
  private claimableMs(): number {
    return Math.floor(this.window.claimUntil - Date.now());
  }

  async run(): Promise<void> {
    this.core.startHeartbeat();
    let decided = false;
    while (Date.now() < this.window.claimUntil) {
      const t0 = Date.now();
      const claimed = this.core.paused ? [] : await this.core.claim(this.claimableMs());
      await Promise.all(claimed.map((l) => l.done()));
      await this.core.drain();
      if (claimed.length > 0 && !decided) {
        decided = true;
        if (claimed.length >= this.o.concurrency) {
          this.fanout = this.fanOut(Date.now() - t0).catch((err: unknown) => this.log('[workhorse] tick fan-out failed:', err));
        }
      }
      if (claimed.length === 0) {
        if (this.o.untilEmpty) break;
        await new Promise((r) => setTimeout(r, Math.max(0, Math.min(this.o.pollMs, this.window.claimUntil - Date.now()))));
      }
    }
  }

  /** Drains and deregisters; `hard` aborts handlers and gives settlement retries up. */
  async stop(hard: boolean): Promise<void> {
    clearTimeout(this.abortTimer);
    this.core.close();
    if (hard) {
      this.core.abandon();
      this.core.abortRunning(new TickDeadlineError());
    } else {
      await this.core.drain();
    }
    await this.core.shutdown();
  }

  private async fanOut(batchMs: number): Promise<void> {
    const o = this.o;
    if (o.maxFanout <= 0 || !o.fanoutFunction || o.generation >= o.maxGeneration) return;
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
    const backlog = await client.protocol.countReady(client.pool, client.namespace, this.worker.options.queues, this.worker.types, shape.tickSpanMs, backlogCap(shape));
    const count = fanoutCount({ ...shape, backlog });
    if (count === 0) return;
    const r = await invokeTicks({ functionName: o.fanoutFunction, generation: o.generation + 1, count, lambda: o.lambda, endpoint: o.lambdaEndpoint });
    this.summary.fannedOut += r.accepted;
    if (r.errors.length > 0) throw new AggregateError(r.errors, `${r.errors.length} of ${count} fan-out invocations failed`);
  }
}

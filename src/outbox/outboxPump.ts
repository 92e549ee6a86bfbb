// Delivery right after a commit, for a long-lived worker that fires the
// `sys` slots with sinks configured: it LISTENs on the namespace's outbox
// channel (publish_v1 notifies it at commit) and runs a delivery pass on
// each hint, once at start, once more when its LISTEN is first in place (an
// event committed between the two sent its hint to nobody) and after each
// reconnect (a hint may have been missed). Hints arriving during a pass cause one more pass after it. The
// sys.outbox cadence stays the safety net; passes lease their events, so
// pumps of several workers and sys.outbox jobs never deliver one batch twice.
// stop() waits for the pass in flight only so long: against a hung server its
// settlement would hold the stop for a lease; its events, if unrecorded, are
// delivered again once the lease ends.
import type pg from 'pg';
import type { Client } from '../client/client.js';
import { settledWithin } from '../worker/boundedWait.js';
import { WakeListener } from '../worker/wakeListener.js';
import { deliverOutbox } from './deliver.js';
import type { ResolvedOutboxOptions } from './outboxOptions.js';

/** The pseudo-queue whose wake channel carries outbox hints (workhorse.outbox_channel_v1). */
export const OUTBOX_CHANNEL_QUEUE = '#outbox';
/** How long stop() waits for the delivery pass in flight to record its outcome. */
export const PUMP_STOP_WAIT_MS = 5_000;

export class OutboxPump {
  private listener: WakeListener | undefined;
  private readonly abort = new AbortController();
  private running: Promise<void> | undefined;
  private again = false;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly client: Client,
    private readonly o: ResolvedOutboxOptions,
    private readonly owner: string,
    private readonly onError: (err: unknown) => void,
  ) {}

  start(): void {
    const config = (this.client.pool as unknown as { options: pg.ClientConfig }).options;
    this.listener = new WakeListener(
      config,
      this.client.namespace,
      [OUTBOX_CHANNEL_QUEUE],
      (hint) => this.kickIn(hint.dueInMs),
      () => this.kick(),
      (err) => this.onError(err),
    );
    this.listener.start();
    this.kick();
    void this.listener.listening.then(() => this.kick());
  }

  private kickIn(ms: number): void {
    if (ms <= 0) return this.kick();
    const t = setTimeout(() => {
      this.timers.delete(t);
      this.kick();
    }, ms);
    t.unref();
    this.timers.add(t);
  }

  /** Runs a pass now, or one more after the pass in flight. */
  kick(): void {
    if (this.abort.signal.aborted) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = deliverOutbox(this.client, this.o, { signal: this.abort.signal, owner: this.owner })
      .then(
        (r) => {
          if (r.nextRetryInMs !== null) this.kickIn(r.nextRetryInMs + 50);
        },
        (err: unknown) => this.onError(err),
      )
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  async stop(): Promise<void> {
    this.abort.abort();
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await this.listener?.close();
    await settledWithin(this.running, PUMP_STOP_WAIT_MS);
  }
}

// Delivery right after a commit, for a long-lived worker that fires the
// `sys` slots with sinks configured: it LISTENs on the namespace's outbox
// channel (publish_v1 notifies it at commit) and runs a delivery pass on
// each hint, once at start, once more when its LISTEN is first in place (an
// event committed between the two sent its hint to nobody) and after each
// reconnect (a hint may have been missed). Hints arriving during a pass
// cause one more pass after it, or beside it when it has run for a second
// (a slow sink holds its own key, not every other); a failed event's retry
// coming due starts one beside it at once (the pass tells the pump of each
// failure as it is recorded, not when it ends). After each pass it
// asks the database when the soonest pending event it could not lease
// becomes leasable (a backoff, a delay, another deliverer's lease) and
// looks again then, up to the sys.outbox cadence: an event that failed in
// another deliverer's pass (a sys.outbox job, an earlier worker) is retried
// after its backoff, not at the next cadence. The cadence stays the safety
// net; passes lease their events, so pumps of several workers and
// sys.outbox jobs never deliver one batch twice. A pass that fails (a
// database fault; deliver.ts releases what it held, or says it could not)
// is tried again after a short backoff (0.5 s, doubling up to 10 s or the
// cadence if sooner), so a brief fault delays delivery by seconds; the fault
// is reported once when it begins and once when a pass works again
// (faultSpell.ts).
// stop() waits for the pass in flight only so long: against a hung server its
// settlement would hold the stop for a lease; its events, if unrecorded, are
// delivered again once the lease ends.
import type pg from 'pg';
import type { Client } from '../client/client.js';
import { GuardedDb } from '../db/guardedDb.js';
import { Backoff } from '../db/retryTransient.js';
import { eachFailure, type FaultReport } from '../faultSpell.js';
import { settledWithin } from '../boundedWait.js';
import { WakeListener } from '../worker/wakeListener.js';
import { deliverOutbox } from './deliver.js';
import type { ResolvedOutboxOptions } from './outboxOptions.js';

/** The pseudo-queue whose wake channel carries outbox hints (workhorse.outbox_channel_v1). */
export const OUTBOX_CHANNEL_QUEUE = '#outbox';
/** How long stop() waits for the delivery pass in flight to record its outcome. */
export const PUMP_STOP_WAIT_MS = 5_000;
/** Added to a due time before looking again, so the event is due by then on the database's clock too. */
const LOOK_AGAIN_SLACK_MS = 50;
/**
 * A pass running this long is waiting on a slow delivery (a pass leases its
 * next batch once every key of this one is done): a hint then starts another pass beside it,
 * which leases what the slow one does not hold, so other keys need not wait
 * for a sink's timeout. The slow key's later events stay behind it (a
 * lease leaves out an event whose key has an earlier one pending).
 */
const SLOW_PASS_MS = 1_000;
/** A kick this close to the end of a backoff runs (the backoff's own timer may fire a millisecond early). */
const BACKOFF_TOLERANCE_MS = 5;
/** Passes one pump runs at once, at most. */
const MAX_PASSES = 4;
/** A failed pass is tried again after this, doubled per failure … */
const PASS_BACKOFF_FIRST_MS = 500;
/** … up to this (or the cadence, if sooner). */
const PASS_BACKOFF_MAX_MS = 10_000;

export class OutboxPump {
  private listener: WakeListener | undefined;
  private readonly abort = new AbortController();
  /** Passes in flight: one, or more beside a slow one (SLOW_PASS_MS). */
  private readonly running = new Set<Promise<void>>();
  private newestStartedAt = 0;
  private again = false;
  private slowCheck = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  /** When the look-again timer fires (at most one is kept: the soonest). */
  private lookAgainAt = Infinity;
  private readonly db: GuardedDb;
  private readonly faults: FaultReport;
  private readonly backoff: Backoff;
  /** Until when no pass starts, after a failed one (0: none failed since the last that worked). */
  private backingOffUntil = 0;

  /** `faults`: where failures go (a function hears each one). */
  constructor(
    private readonly client: Client,
    private readonly o: ResolvedOutboxOptions,
    private readonly owner: string,
    faults: FaultReport | ((err: unknown) => void),
  ) {
    this.db = new GuardedDb(client.pool, { timeoutMs: o.leaseMs });
    this.faults = typeof faults === 'function' ? eachFailure(faults) : faults;
    this.backoff = new Backoff({ baseMs: PASS_BACKOFF_FIRST_MS, maxMs: Math.max(PASS_BACKOFF_FIRST_MS, Math.min(PASS_BACKOFF_MAX_MS, o.everyMs)) });
  }

  start(): void {
    const config = (this.client.pool as unknown as { options: pg.ClientConfig }).options;
    this.listener = new WakeListener(
      config,
      this.client.namespace,
      [OUTBOX_CHANNEL_QUEUE],
      (hint) => this.kickIn(hint.dueInMs),
      () => this.kick(),
      // A LISTEN that cannot connect is a failure too; only a pass that works ends the fault.
      (err) => this.faults.failed(err),
    );
    this.listener.start();
    this.kick();
    void this.listener.listening.then(() => this.kick());
  }

  /** `due`: an event is due then (kick's `due`). */
  private kickIn(ms: number, due = false): void {
    if (ms <= 0) return this.kick(due);
    const t = setTimeout(() => {
      this.timers.delete(t);
      this.kick(due);
    }, ms);
    t.unref();
    this.timers.add(t);
  }

  /** A pass in `ms` (capped at the cadence), unless one is already due sooner. */
  private lookAgainIn(ms: number): void {
    const at = Date.now() + Math.min(ms, this.o.everyMs);
    if (at >= this.lookAgainAt) return;
    this.lookAgainAt = at;
    this.kickIn(at - Date.now(), true);
  }

  private async pass(): Promise<void> {
    this.lookAgainAt = Infinity;
    // A failure's retry is looked for when it is due, even while this pass still waits on a slow sink.
    const r = await deliverOutbox(this.client, this.o, {
      signal: this.abort.signal,
      owner: this.owner,
      onRetryDue: (ms) => this.lookAgainIn(ms + LOOK_AGAIN_SLACK_MS),
    });
    if (r.nextRetryInMs !== null) this.lookAgainIn(r.nextRetryInMs + LOOK_AGAIN_SLACK_MS);
    if (this.abort.signal.aborted) return;
    const due = await this.client.protocol.outboxNextDueMs(this.db, this.client.namespace);
    if (due !== null) this.lookAgainIn(due + LOOK_AGAIN_SLACK_MS);
  }

  /**
   * Runs a pass now, or one more after the pass in flight. `due`: an event
   * is due now (a retry's backoff ended): a pass starts beside a young one,
   * since that one may wait on a slow sink (a hint waits until it counts as slow).
   */
  kick(due = false): void {
    if (this.abort.signal.aborted) return;
    // After a failed pass the next waits out its backoff (a timer kicks then): a commit's
    // notification during a fault would otherwise start one per publish.
    if (Date.now() + BACKOFF_TOLERANCE_MS < this.backingOffUntil) return;
    if (this.running.size > 0) {
      const youngForMs = this.newestStartedAt + SLOW_PASS_MS - Date.now();
      if (this.running.size >= MAX_PASSES || (youngForMs > 0 && !due)) {
        this.again = true;
        // If the newest pass is still running once it counts as slow, start one beside it then.
        if (this.running.size < MAX_PASSES && !this.slowCheck) {
          this.slowCheck = true;
          this.kickIn(youngForMs + 1);
        }
        return;
      }
    }
    this.again = false;
    this.slowCheck = false;
    this.newestStartedAt = Date.now();
    const p: Promise<void> = this.pass()
      .then(
        () => {
          this.backoff.reset();
          this.backingOffUntil = 0;
          this.faults.ok();
        },
        (err: unknown) => {
          this.faults.failed(err);
          // Tried again after a backoff: a fault that leaves the LISTEN up (a read-only database) sends no hint to end it.
          if (this.abort.signal.aborted) return;
          // Its own timer, not lookAgainIn's: a sooner look-again would be turned away by the backoff and leave none.
          const ms = this.backoff.next();
          this.backingOffUntil = Date.now() + ms;
          this.kickIn(ms);
        },
      )
      .finally(() => {
        this.running.delete(p);
        if (this.again) this.kick();
      });
    this.running.add(p);
  }

  async stop(): Promise<void> {
    this.abort.abort();
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await this.listener?.close();
    await settledWithin(Promise.all(this.running), PUMP_STOP_WAIT_MS);
  }
}

// The worker's one heartbeat timer: every interval, a single
// heartbeat_many_v1 statement refreshes the registry row, extends every
// lease the worker holds (telling the database which handlers have started)
// and runs a bounded recovery pass. Leases the database no longer accepts
// are reported lost; so is every lease once no heartbeat has succeeded for
// a whole lease window, since the database may already have recovered
// those jobs. After a claim failed (its answer may have been lost with its
// connection), the next beat also hands back the leases the worker does not
// hold, unstarted, so their jobs run at once without losing an attempt. A failed beat (a database fault) is retried sooner, with
// capped backoff, and never ends the worker. A beat that fires a whole lease
// late (the process was stopped, or its event loop blocked by a handler)
// first gives up, before it awaits anything, the leases whose last
// extension is a whole lease old: their jobs may already be another
// worker's, and the timers and I/O the stall held back run after this one,
// so a handler resuming then finds its ctx.signal aborted.
import type { HeartbeatResult, HeldLease, Protocol, Queryable } from '../db/protocol.js';
import { Backoff } from '../db/retryTransient.js';

export interface HeartbeatDeps {
  protocol: Protocol;
  db: Queryable;
  namespace: string;
  workerId: string;
  intervalMs: number;
  leaseMs: number;
  recoverLimit: number;
  /** Every lease the worker holds now (buffered, running, settling). */
  leases(): HeldLease[];
  /** Handlers running right now (stored in the registry). */
  active(): number;
  /**
   * Claims that failed after they may have committed (their answer lost):
   * how many so far, and the window (ms) in which their leases were taken,
   * when the beat should release the leases the worker does not hold; null
   * when there is nothing to release or a claim is in flight.
   */
  lostClaims(): { count: number; withinMs: number } | null;
  /** The beat released what the claims counted up to `n` may have leased. */
  released(n: number): void;
  /** The database refused this lease. */
  onLost(jobId: string, execution: number): void;
  /**
   * No beat reached the database for a whole lease: this lease may have
   * expired unseen; `stalledMs` when the process stalled that long (a beat
   * fired that late). True when the lease was held until now.
   */
  onExpired(jobId: string, execution: number, stalledMs?: number): boolean;
  /** The rest of the answer: operator pause, whether the registry row still exists. */
  onResult(r: HeartbeatResult): Promise<void>;
  /** A beat failed; `sinceOkMs`: how long since the last one that went through (past leaseMs, the leases have run out). */
  onError(err: unknown, sinceOkMs: number): void;
  /** The beat fired `lateMs` late (a stopped process, a blocked event loop) and `expired` leases ran out meanwhile. */
  onLate(lateMs: number, expired: number): void;
}

export class Heartbeat {
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private started = false;
  private lastOk = Date.now();
  /** When the armed timer should fire. */
  private dueAt = Date.now();
  private readonly backoff: Backoff;

  constructor(private readonly deps: HeartbeatDeps) {
    this.backoff = new Backoff({ baseMs: Math.min(250, deps.intervalMs), maxMs: deps.intervalMs });
  }

  get running(): boolean {
    return this.started;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.lastOk = Date.now();
    this.arm(this.deps.intervalMs);
  }

  /** Stops the timer and waits for a beat in flight. */
  async stop(): Promise<void> {
    this.started = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.inFlight;
  }

  /** Beats now (or joins the beat in flight). */
  beat(): Promise<void> {
    this.inFlight ??= this.once().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private arm(ms: number): void {
    if (!this.started) return;
    if (this.timer) clearTimeout(this.timer);
    this.dueAt = Date.now() + ms;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const now = Date.now();
      // Before anything the stall held back runs: a handler resuming after it must find its signal aborted.
      // A beat more than an interval late is a stall of the process; otherwise the beats failed (the database).
      const lateMs = now - this.dueAt;
      const stalled = lateMs > this.deps.intervalMs ? lateMs : undefined;
      const expired = this.expireOverdue(now, stalled);
      if (expired > 0 && stalled !== undefined) this.deps.onLate(stalled, expired);
      void this.beat();
    }, ms);
    this.timer.unref();
  }

  private async once(): Promise<void> {
    const d = this.deps;
    const leases = d.leases();
    const lost = d.lostClaims();
    try {
      const hb = await d.protocol.heartbeatMany(d.db, d.namespace, d.workerId, leases, d.active(), d.leaseMs, d.recoverLimit, lost?.withinMs ?? null);
      if (lost !== null) d.released(lost.count);
      this.lastOk = Date.now();
      this.backoff.reset();
      this.arm(d.intervalMs);
      for (const l of leases) if (!hb.accepted.has(l.id)) d.onLost(l.id, l.execution);
      await d.onResult(hb);
    } catch (err) {
      this.arm(this.backoff.next());
      const now = Date.now();
      d.onError(err, now - this.lastOk);
      this.expireOverdue(now);
    }
  }

  /**
   * Gives up the leases whose last extension is a whole lease old: the last
   * beat that went through, or their claim when that came later (claims may
   * go through while beats do not: a lock on the registry). Returns how many.
   */
  private expireOverdue(now: number, stalledMs?: number): number {
    const d = this.deps;
    let n = 0;
    for (const l of d.leases()) {
      if (now - Math.max(this.lastOk, l.claimedAt ?? 0) > d.leaseMs && d.onExpired(l.id, l.execution, stalledMs)) n++;
    }
    return n;
  }
}

// The worker's one heartbeat timer: every interval, a single
// heartbeat_many_v1 statement refreshes the registry row, extends every
// lease the worker holds (telling the database which handlers have started)
// and runs a bounded recovery pass. Leases the database no longer accepts
// are reported lost; so is every lease once no heartbeat has succeeded for
// a whole lease window, since the database may already have recovered
// those jobs. After a claim failed (its answer may have been lost with its
// connection), the next beat also hands back the leases the worker does not
// hold, unstarted, so their jobs run at once without losing an attempt. A failed beat (a database fault) is retried sooner, with
// capped backoff, and never ends the worker. A watchdog timer, armed every
// interval whatever the beats do, gives up the leases whose last extension
// is a whole lease old: after a stall of the process (stopped, or its event
// loop blocked by a handler) their jobs may already be another worker's,
// and the timers and I/O the stall held back that came due after the
// watchdog run after it, so a handler resuming then finds its ctx.signal
// aborted. Ages are measured on a monotonic clock.
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

/** A spell the database was out of a worker's view, in ms before now. */
export interface BlindSpell {
  beganMsAgo: number;
  endedMsAgo: number;
}

export class Heartbeat {
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private started = false;
  /**
   * When the last beat that went through was sent (performance.now(): a
   * monotonic clock, so a wall-clock step cannot make a healthy worker give
   * its leases up). Sent, not answered: the database extended the leases
   * then, and an answer that comes late (the process stalled meanwhile)
   * must not make them look fresh.
   */
  private lastOk = performance.now();
  /**
   * The last spell the database was out of view (performance.now()): from
   * the last beat that went through before it to the one that went through
   * after failed ones, or more than two intervals after the last (the
   * process stalled). Undefined until the first such spell ends.
   */
  private blind: { from: number; to: number } | undefined;
  private lastFailed = false;
  /** When the beat in flight was sent (it may have extended the leases already), or undefined. */
  private sentAt: number | undefined;
  /** The watchdog: every interval, whatever the beats do, it gives up the leases that have run out. */
  private watchdog: NodeJS.Timeout | undefined;
  /** When the watchdog should fire (performance.now()). */
  private watchDueAt = performance.now();
  private readonly backoff: Backoff;

  constructor(private readonly deps: HeartbeatDeps) {
    this.backoff = new Backoff({ baseMs: Math.min(250, deps.intervalMs), maxMs: deps.intervalMs });
  }

  get running(): boolean {
    return this.started;
  }

  /** How long the beats have been failing (since the last one that went through was sent), or 0 when the last went through. */
  get failingMs(): number {
    return this.started && this.lastFailed ? Math.round(performance.now() - this.lastOk) : 0;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.lastOk = performance.now();
    this.arm(this.deps.intervalMs);
    this.watch();
  }

  /** Stops the timer and waits for a beat in flight. */
  async stop(): Promise<void> {
    this.started = false;
    if (this.timer) clearTimeout(this.timer);
    if (this.watchdog) clearTimeout(this.watchdog);
    this.timer = this.watchdog = undefined;
    await this.inFlight;
  }

  /** The beat in flight, if any (it never rejects). */
  pending(): Promise<void> | undefined {
    return this.inFlight;
  }

  /** Beats now (or joins the beat in flight). */
  beat(): Promise<void> {
    this.inFlight ??= this.once().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  /**
   * The last spell the database was out of view (beats failing, or the
   * process stalled), as how long ago it began and ended; undefined when
   * none has. What others did meanwhile was not seen: the alerts use it.
   */
  lastBlindSpell(): BlindSpell | undefined {
    if (!this.blind) return undefined;
    const now = performance.now();
    return { beganMsAgo: Math.round(now - this.blind.from), endedMsAgo: Math.round(now - this.blind.to) };
  }

  private arm(ms: number): void {
    if (!this.started) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.beat();
    }, ms);
    this.timer.unref();
  }

  /**
   * Arms the watchdog, apart from the beat's timer (which waits while a beat
   * is in flight). After a stall it fires before anything the stall held
   * back whose time came later than its own (a handler's timer, I/O), so
   * such a handler finds its signal aborted. A beat in flight counts as
   * having extended the leases when it was sent: a healthy worker whose
   * beat is merely slow gives nothing up.
   */
  private watch(): void {
    if (!this.started) return;
    const ms = this.deps.intervalMs;
    this.watchDueAt = performance.now() + ms;
    this.watchdog = setTimeout(() => {
      this.watchdog = undefined;
      this.expireIfOverdue(Math.max(this.lastOk, this.sentAt ?? -Infinity));
      this.watch();
    }, ms);
    this.watchdog.unref();
  }

  /**
   * Gives up the leases overdue counting from `freshest`; a stall when the
   * watchdog is more than an interval late and the leases were still good
   * when it was due (otherwise the beats failed: the database).
   */
  private expireIfOverdue(freshest: number): void {
    const lateMs = performance.now() - this.watchDueAt;
    this.expireStalled(lateMs > this.deps.intervalMs && this.watchDueAt - freshest <= this.deps.leaseMs ? lateMs : undefined, freshest);
  }

  private async once(): Promise<void> {
    const d = this.deps;
    // A beat sent after a stall (its timer may fire before the watchdog's) must not count for the leases first.
    if (this.started) this.expireIfOverdue(this.lastOk);
    const leases = d.leases();
    const lost = d.lostClaims();
    const sentAt = performance.now();
    this.sentAt = sentAt;
    try {
      const hb = await d.protocol.heartbeatMany(d.db, d.namespace, d.workerId, leases, d.active(), d.leaseMs, d.recoverLimit, lost?.withinMs ?? null);
      this.sentAt = undefined;
      if (lost !== null) d.released(lost.count);
      if (this.lastFailed || sentAt - this.lastOk > 2 * d.intervalMs) this.blind = { from: this.lastOk, to: sentAt };
      this.lastFailed = false;
      this.lastOk = sentAt;
      this.backoff.reset();
      this.arm(d.intervalMs);
      for (const l of leases) if (!hb.accepted.has(l.id)) d.onLost(l.id, l.execution);
      // Answered a whole lease after it was sent (its call's own timeout is shorter): the process stalled
      // while it was in flight, and the leases it extended have run out since (if the watchdog has not said so).
      const tookMs = performance.now() - sentAt;
      if (tookMs > d.leaseMs) this.expireStalled(tookMs, this.lastOk);
      await d.onResult(hb);
    } catch (err) {
      this.sentAt = undefined;
      this.lastFailed = true;
      this.arm(this.backoff.next());
      d.onError(err, Math.round(performance.now() - this.lastOk));
      this.expireOverdue(this.lastOk);
    }
  }

  /** Gives up the overdue leases; when `stalledMs` is set (the process stalled that long), says so once. */
  private expireStalled(stalledMs: number | undefined, freshest: number): void {
    const expired = this.expireOverdue(freshest, stalledMs === undefined ? undefined : Math.round(stalledMs));
    if (expired > 0 && stalledMs !== undefined) this.deps.onLate(Math.round(stalledMs), expired);
  }

  /**
   * Gives up the leases whose last extension is a whole lease old: the
   * `freshest` beat (sent: it may have gone through), or their claim when
   * that came later (claims may go through while beats do not: a lock on
   * the registry). Returns how many.
   */
  private expireOverdue(freshest: number, stalledMs?: number): number {
    const d = this.deps;
    const sinceBeat = performance.now() - freshest;
    const wallNow = Date.now();
    let n = 0;
    for (const l of d.leases()) {
      // claimedAt is wall-clock time: the smaller of the two ages, so a clock step alone never expires a lease.
      const age = Math.min(sinceBeat, l.claimedAt === undefined ? Infinity : wallNow - l.claimedAt);
      if (age > d.leaseMs && d.onExpired(l.id, l.execution, stalledMs)) n++;
    }
    return n;
  }
}

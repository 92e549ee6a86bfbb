// The worker's one heartbeat timer: every interval, a single
// heartbeat_many_v1 statement refreshes the registry row, extends every
// lease the worker holds and runs a bounded recovery pass. Leases the
// database no longer accepts are reported lost; so is every lease once no
// heartbeat has succeeded for a whole lease window, since the database may
// already have recovered those jobs.
import type pg from 'pg';
import * as protocol from '../db/protocol.js';
import type { HeartbeatResult, LeaseRef } from '../db/protocol.js';

export interface HeartbeatDeps {
  pool: pg.Pool;
  namespace: string;
  workerId: string;
  intervalMs: number;
  leaseMs: number;
  recoverLimit: number;
  /** Every lease the worker holds now (buffered, running, settling). */
  leases(): LeaseRef[];
  /** Handlers running right now (stored in the registry). */
  active(): number;
  /** The database refused this lease, or it may have expired unseen. */
  onLost(jobId: string): void;
  /** The rest of the answer: operator pause, whether the registry row still exists. */
  onResult(r: HeartbeatResult): Promise<void>;
  onError(err: unknown): void;
}

export class Heartbeat {
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private lastOk = Date.now();

  constructor(private readonly deps: HeartbeatDeps) {}

  get running(): boolean {
    return this.timer !== undefined;
  }

  start(): void {
    this.lastOk = Date.now();
    this.timer ??= setInterval(() => void this.beat(), this.deps.intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and waits for a beat in flight. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
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

  private async once(): Promise<void> {
    const d = this.deps;
    const leases = d.leases();
    try {
      const hb = await protocol.heartbeatMany(d.pool, d.namespace, d.workerId, leases, d.active(), d.leaseMs, d.recoverLimit);
      this.lastOk = Date.now();
      for (const l of leases) if (!hb.accepted.has(l.id)) d.onLost(l.id);
      await d.onResult(hb);
    } catch (err) {
      d.onError(err);
      if (Date.now() - this.lastOk > d.leaseMs) for (const l of d.leases()) d.onLost(l.id);
    }
  }
}

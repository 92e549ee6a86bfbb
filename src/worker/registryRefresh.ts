// The registry refresh of a long-lived worker, on its own interval
// (registryIntervalMs) rather than the heartbeat's: it refreshes the
// worker's registry row and reads the operator pause and how many live
// peers share its queues. A failed refresh changes nothing: dispatch goes
// on and the worker keeps its last remote-pause decision until a refresh
// succeeds. A row that is gone (the worker was declared dead and removed)
// is registered again.
import type { Protocol, Queryable, RegistryRefresh } from '../db/protocol.js';

export interface RegistryRefreshDeps {
  protocol: Protocol;
  db: Queryable;
  namespace: string;
  workerId: string;
  intervalMs: number;
  /** Handlers running right now (stored in the registry). */
  active(): number;
  /** A successful answer: apply the pause, note the peers, register again if the row is gone. */
  onResult(r: RegistryRefresh): Promise<void>;
  /** Each failed refresh. */
  onError(err: unknown): void;
}

export class RegistryRefresher {
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private started = false;

  constructor(private readonly d: RegistryRefreshDeps) {}

  /** Refreshes now, then every interval. */
  start(): void {
    if (this.started) return;
    this.started = true;
    void this.refresh();
  }

  async stop(): Promise<void> {
    this.started = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.inFlight;
  }

  /** Refreshes now (or joins the refresh in flight). */
  refresh(): Promise<void> {
    this.inFlight ??= this.once().finally(() => {
      this.inFlight = undefined;
      this.arm();
    });
    return this.inFlight;
  }

  private arm(): void {
    if (!this.started) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(), this.d.intervalMs);
    this.timer.unref();
  }

  private async once(): Promise<void> {
    const d = this.d;
    try {
      const r = await d.protocol.refreshWorker(d.db, d.namespace, d.workerId, d.active());
      await d.onResult(r);
    } catch (err) {
      // Every failure: the worker's fault report logs a line when a fault begins and one when it ends, counting the tries.
      d.onError(err);
    }
  }
}

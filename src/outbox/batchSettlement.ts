// A delivery batch's outcomes, recorded as its keys finish rather than all
// at once at the end. A batch holds many keys; one whose sink is slow (up to
// the webhook's timeout, or the lease) kept every other key of its batch
// leased and unrecorded until it was done, so their later events waited for
// it too. Outcomes of keys that are done are written within FLUSH_AFTER_MS
// while others still run; a batch whose keys all finish by then is written
// in one call, as before. Writes go one after another; the first that
// fails is what finish() throws, after the rest were tried.
import type { OutboxSettlement } from '../db/protocol.js';

/** How long a finished key's outcome may wait for others before it is written. */
export const FLUSH_AFTER_MS = 250;

export class BatchSettlement {
  private pending: OutboxSettlement = { delivered: [], failed: [], released: [] };
  private timer: NodeJS.Timeout | undefined;
  private writes: Promise<void> = Promise.resolve();
  private error: { err: unknown } | undefined;

  constructor(private readonly write: (part: OutboxSettlement) => Promise<void>) {}

  /** One key's outcomes (or one event's): written with others within FLUSH_AFTER_MS, or at finish(). */
  add(part: OutboxSettlement): void {
    this.pending.delivered.push(...part.delivered);
    this.pending.failed.push(...part.failed);
    this.pending.released.push(...part.released);
    this.timer ??= setTimeout(() => this.flush(), FLUSH_AFTER_MS);
  }

  /** Writes what is left once every key is done; throws the first write's failure. */
  async finish(): Promise<void> {
    this.flush();
    await this.writes;
    if (this.error) throw this.error.err;
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const part = this.pending;
    if (part.delivered.length + part.failed.length + part.released.length === 0) return;
    this.pending = { delivered: [], failed: [], released: [] };
    this.writes = this.writes.then(() =>
      this.write(part).catch((err: unknown) => {
        this.error ??= { err };
      }),
    );
  }
}

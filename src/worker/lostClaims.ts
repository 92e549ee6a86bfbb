// The claims a worker sent whose answer it never got (a fault after the
// statement may have committed): their leases exist in the database, held
// under this worker's id, with no handler behind them. The next heartbeat
// hands them back, naming the window they were taken in (heartbeat.ts); a
// claim sent while that beat is in flight waits for it, since the beat
// releases every lease of this worker taken in the window that it does not
// name, and would release the new claim's too.

/** Added to the time since a lost claim was sent, for the database's clock and the heartbeat's own trip. */
const LOST_CLAIM_SLACK_MS = 2_000;

export class LostClaims {
  /** Claims lost so far, and how many of them a heartbeat released. */
  private lost = 0;
  private released = 0;
  /** When the first unreleased one was sent (Date.now()). */
  private since: number | undefined;
  /** A beat that releases them was sent: the next claim waits for it. */
  private releasing = false;

  /** A claim sent at `sentAt` may have committed with its answer lost. */
  add(sentAt: number): void {
    this.lost++;
    this.since ??= sentAt;
  }

  /**
   * What the next heartbeat is to release (how many lost claims, taken
   * within how many ms), or null: none, or a claim is being admitted now
   * (its leases are not in the table yet). Asking marks a releasing beat.
   */
  forBeat(claiming: boolean): { count: number; withinMs: number } | null {
    if (!(this.lost > this.released && !claiming && this.since !== undefined)) return null;
    this.releasing = true;
    return { count: this.lost, withinMs: Math.min(2_147_483_647, Date.now() - this.since + LOST_CLAIM_SLACK_MS) };
  }

  /** A beat released the first `n` lost claims. */
  releasedUpTo(n: number): void {
    this.released = Math.max(this.released, n);
    if (this.released === this.lost) this.since = undefined;
  }

  /** Before a claim is sent: waits for a releasing beat in flight (`pending`: the heartbeat's). */
  async beforeClaim(pending: () => Promise<unknown> | undefined): Promise<void> {
    if (!this.releasing) return;
    await pending();
    this.releasing = false;
  }
}

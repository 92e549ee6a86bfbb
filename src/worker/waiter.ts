// A reusable wake-up: the run loop sleeps on it until something happens or
// the safety poll runs out. The reason matters: a freed slot only justifies
// a claim once enough slots are free to make a worthwhile batch, while a
// NOTIFY hint, a resume or a stop acts at once.

export type WakeReason = 'timeout' | 'slot' | 'hint';

const RANK: Record<WakeReason, number> = { timeout: 0, slot: 1, hint: 2 };

export class Waiter {
  private wakeUp: ((reason: WakeReason) => void) | undefined;
  private pending: WakeReason | undefined;

  /** Wakes the current wait, or makes the next wait return at once. */
  wake(reason: Exclude<WakeReason, 'timeout'> = 'hint'): void {
    if (this.wakeUp) this.wakeUp(reason);
    else if (!this.pending || RANK[reason] > RANK[this.pending]) this.pending = reason;
  }

  wait(ms: number): Promise<WakeReason> {
    if (this.pending) {
      const r = this.pending;
      this.pending = undefined;
      return Promise.resolve(r);
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => done('timeout'), ms);
      const done = (reason: WakeReason) => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        resolve(reason);
      };
      this.wakeUp = done;
    });
  }
}

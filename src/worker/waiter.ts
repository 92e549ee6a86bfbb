// A reusable wake-up: the run loop sleeps on it until something happens, a
// delayed job comes due, or the safety poll runs out. The reason matters: a
// freed slot only justifies a claim once enough slots are free to make a
// worthwhile batch; a wake hint from another process (`notify`) or a due
// time (`due`) acts after a short stagger, so idle peers do not all claim
// the same rows at once; a local hint (a resume, a stop) acts at once.

export type WakeReason = 'timeout' | 'slot' | 'due' | 'notify' | 'hint';

const RANK: Record<WakeReason, number> = { timeout: 0, slot: 1, due: 2, notify: 3, hint: 4 };

export class Waiter {
  private wakeUp: ((reason: WakeReason) => void) | undefined;
  private rearm: (() => void) | undefined;
  private pending: WakeReason | undefined;
  /** When (this machine's clock, epoch ms) the next known delayed job comes due. */
  private dueAt: number | undefined;

  /** Wakes the current wait, or makes the next wait return at once. */
  wake(reason: Exclude<WakeReason, 'timeout' | 'due'> = 'hint'): void {
    if (this.wakeUp) this.wakeUp(reason);
    else if (!this.pending || RANK[reason] > RANK[this.pending]) this.pending = reason;
  }

  /** Wakes with `due` at `at` (epoch ms), unless an earlier due time is already set. */
  wakeAt(at: number): void {
    if (this.dueAt !== undefined && this.dueAt <= at) return;
    this.dueAt = at;
    this.rearm?.();
  }

  /** The due time set, if any (for tests and the runtime state). */
  get nextDueAt(): number | undefined {
    return this.dueAt;
  }

  wait(ms: number): Promise<WakeReason> {
    if (this.pending) {
      const r = this.pending;
      this.pending = undefined;
      return Promise.resolve(r);
    }
    if (this.dueAt !== undefined && this.dueAt <= Date.now()) {
      this.dueAt = undefined;
      return Promise.resolve('due');
    }
    const deadline = Date.now() + ms;
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = (reason: WakeReason) => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        this.rearm = undefined;
        resolve(reason);
      };
      const arm = () => {
        clearTimeout(timer);
        const due = this.dueAt !== undefined && this.dueAt < deadline ? this.dueAt : undefined;
        timer = setTimeout(
          () => {
            if (due !== undefined && this.dueAt === due) this.dueAt = undefined;
            done(due !== undefined ? 'due' : 'timeout');
          },
          Math.max(0, (due ?? deadline) - Date.now()),
        );
      };
      this.wakeUp = done;
      this.rearm = arm;
      arm();
    });
  }
}

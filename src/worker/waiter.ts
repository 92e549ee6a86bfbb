// A reusable wake-up: the run loop sleeps on it until a NOTIFY hint, a freed
// slot, a resume or a stop wakes it, or the safety poll runs out.

export class Waiter {
  private wakeUp: (() => void) | undefined;
  private pending = false;

  /** Wakes the current wait, or makes the next wait return at once. */
  wake(): void {
    if (this.wakeUp) this.wakeUp();
    else this.pending = true;
  }

  wait(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.wakeUp = undefined;
        resolve();
      }
      this.wakeUp = done;
    });
  }
}

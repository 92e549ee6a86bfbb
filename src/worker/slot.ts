// One lease the worker holds, from claim to settlement: buffered (claimed,
// not started), running, or settling. `done()` lets drain and runOnce wait
// for it; the promise is made only when someone waits.
import type { ClaimedJob } from '../db/protocol.js';
import { JobAbort } from './jobAbort.js';

export class Slot {
  readonly abort = new JobAbort();
  started = false;
  lost = false;
  private finished = false;
  private waiters: (() => void)[] | undefined;

  constructor(readonly job: ClaimedJob) {}

  done(): Promise<void> {
    if (this.finished) return Promise.resolve();
    return new Promise((resolve) => (this.waiters ??= []).push(resolve));
  }

  finish(): void {
    if (this.finished) return;
    this.finished = true;
    if (this.waiters) for (const w of this.waiters) w();
    this.waiters = undefined;
  }
}

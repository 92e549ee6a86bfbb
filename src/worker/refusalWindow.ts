// How long a handler's own fenced writes (ctx.step's read and record,
// ctx.progress, a wait's opening, ctx.spawn, a ctx.txStep's own statements)
// wait out a refusal only an operator ends (operatorFixable.ts: grants
// revoked, a function dropped, an id sequence at its maximum): one lease
// window from the first, as settlements do, logging what to do (the
// worker's `handler writes` fault line). Past it the write fails with a
// DatabaseUnavailableError that says so, and the attempt fails naming the
// real cause. Before, such a write was retried without a word for as long
// as the job held its lease, which its heartbeats kept for ever: the
// handler hung, and a job with a timeout failed only as "exceeded its
// timeout". Database faults (a restart, a lost connection) are still
// waited out while the lease holds.
import { operatorHint, isOperatorFixable } from '../db/operatorFixable.js';
import { describeDbError } from '../db/transient.js';
import { DatabaseUnavailableError } from '../errors.js';
import type { FaultReport } from '../faultSpell.js';

export class RefusalWindow {
  /** When the first refusal came: the window runs from it. */
  private first: number | undefined;

  constructor(
    private readonly ms: number,
    private readonly faults: FaultReport,
    private readonly jobId: string,
  ) {}

  /** Whether `err` may be tried again: a refusal an operator ends, within the window from the first. */
  allows(err: unknown): boolean {
    if (!isOperatorFixable(err)) return false;
    const now = Date.now();
    this.first ??= now;
    return now < this.first + this.ms;
  }

  /** A failed try that will be tried again, for the worker's fault line. */
  failed(err: unknown): void {
    const begins = isOperatorFixable(err)
      ? `refused; the handler's write is tried again for up to the lease (${this.ms} ms), then its attempt fails`
      : "database fault; the handler's write is tried again while its job holds the lease";
    this.faults.failed(err, begins);
  }

  /** What the write fails with once a refusal outlasted the window: the refusal, how long it was waited out, and what to do. */
  giveUp(err: unknown): unknown {
    if (!isOperatorFixable(err) || this.first === undefined) return err;
    const hint = operatorHint(err);
    // How long it was refused: the window, or less when the job was stopped first (its timeout, a cancel).
    const ms = Math.min(this.ms, Date.now() - this.first);
    return new DatabaseUnavailableError(
      `job ${this.jobId}: the database refused a write of its handler for ${ms} ms (${describeDbError(err)})${hint ? `; ${hint}` : ''}`,
      { cause: err },
    );
  }
}

// Group commit for settlements. Handlers finish one at a time; the settler
// collects their outcomes and writes each batch in one complete_many_v1 and
// one fail_many_v1 statement. While a batch is in flight the next one fills,
// so no delay is added and a busy worker settles in large batches.
import * as protocol from '../db/protocol.js';
import type { Failure, FailOutcome, LeaseRef, Queryable } from '../db/protocol.js';

export type SettleOutcome =
  | { accepted: true; status: 'succeeded' | 'ready' | 'failed'; runAt?: Date }
  | { accepted: false };

interface Pending<T> {
  item: T;
  resolve: (o: SettleOutcome) => void;
  reject: (err: unknown) => void;
}

export class Settler {
  private completions: Pending<LeaseRef & { result: unknown }>[] = [];
  private failures: Pending<Failure>[] = [];
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly db: Queryable,
    private readonly namespace: string,
  ) {}

  complete(lease: LeaseRef, result: unknown): Promise<SettleOutcome> {
    return new Promise((resolve, reject) => {
      this.completions.push({ item: { ...lease, result }, resolve, reject });
      this.schedule();
    });
  }

  fail(failure: Failure): Promise<SettleOutcome> {
    return new Promise((resolve, reject) => {
      this.failures.push({ item: failure, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves when everything queued so far is written. */
  async drain(): Promise<void> {
    while (this.flushing || this.completions.length || this.failures.length) {
      this.schedule();
      await this.flushing;
    }
  }

  private schedule(): void {
    if (this.flushing) return;
    this.flushing = (async () => {
      try {
        while (this.completions.length || this.failures.length) await this.flushOnce();
      } finally {
        this.flushing = undefined;
      }
    })();
  }

  private async flushOnce(): Promise<void> {
    const done = this.completions;
    const failed = this.failures;
    this.completions = [];
    this.failures = [];
    await Promise.all([this.writeCompletions(done), this.writeFailures(failed)]);
  }

  private async writeCompletions(batch: Pending<LeaseRef & { result: unknown }>[]): Promise<void> {
    if (!batch.length) return;
    try {
      const accepted = await protocol.completeMany(this.db, this.namespace, batch.map((p) => p.item));
      for (const p of batch) {
        p.resolve(accepted.has(p.item.id) ? { accepted: true, status: 'succeeded' } : { accepted: false });
      }
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
  }

  private async writeFailures(batch: Pending<Failure>[]): Promise<void> {
    if (!batch.length) return;
    try {
      const accepted: Map<string, FailOutcome> = await protocol.failMany(this.db, this.namespace, batch.map((p) => p.item));
      for (const p of batch) {
        const o = accepted.get(p.item.id);
        p.resolve(o ? { accepted: true, status: o.status, runAt: o.runAt } : { accepted: false });
      }
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
  }
}

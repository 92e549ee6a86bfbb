// The handler context: the claimed job, its AbortSignal, and the durable
// writes a handler can make — progress, checkpoints (`step`) and
// transactional steps (`txStep`). Every write carries (job id, execution)
// and is refused with StaleLeaseError once the fence has moved on.
import type pg from 'pg';
import * as protocol from '../db/protocol.js';
import type { ClaimedJob } from '../db/rows.js';
import { StaleLeaseError } from '../errors.js';
import type { JobAbort } from './jobAbort.js';

export interface HandlerContext {
  /** The claimed job: id, type, queue, attempt, execution (the fence), … */
  readonly job: ClaimedJob;
  /** Aborted when the lease is lost, the job times out or the worker stops hard. */
  readonly signal: AbortSignal;
  readonly workerId: string;
  /** The time by which the handler must finish (tick workers), or null. */
  readonly deadline: Date | null;
  /** Milliseconds left before `deadline` (Infinity when there is none). */
  remainingMs(): number;
  /** Stores a progress value on the job, under the fence. */
  progress(value: unknown): Promise<void>;
  /**
   * A checkpoint: runs `fn` once and records its JSON result. On a retried
   * job a recorded step returns the recorded result and `fn` does not run.
   */
  step<T>(name: string, fn: () => Promise<T> | T): Promise<T>;
  /**
   * A transactional step: `fn`'s writes through the pg client it is handed
   * commit in the same transaction as the step's checkpoint, under the fence,
   * so the step takes effect exactly once.
   */
  txStep<T>(name: string, fn: (tx: pg.PoolClient) => Promise<T>): Promise<T>;
}

export interface ContextDeps {
  pool: pg.Pool;
  namespace: string;
  workerId: string;
  deadline: Date | null;
}

/**
 * The context one handler receives. A class, so a job costs one small
 * object rather than a closure per method; the signal is made on first use.
 */
class JobContext implements HandlerContext {
  private readonly lease: { id: string; execution: number };

  constructor(
    readonly job: ClaimedJob,
    private readonly abort: JobAbort,
    private readonly deps: ContextDeps,
  ) {
    this.lease = { id: job.id, execution: job.execution };
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  get workerId(): string {
    return this.deps.workerId;
  }

  get deadline(): Date | null {
    return this.deps.deadline;
  }

  remainingMs(): number {
    return this.deps.deadline ? Math.max(0, this.deps.deadline.getTime() - Date.now()) : Infinity;
  }

  async progress(value: unknown): Promise<void> {
    await protocol.setProgress(this.deps.pool, this.deps.namespace, this.lease, value);
  }

  async step<T>(name: string, fn: () => Promise<T> | T): Promise<T> {
    this.assertLive(`step "${name}"`);
    const { pool, namespace } = this.deps;
    // A fenced read: a stale owner is refused before `fn` runs.
    const opened = await protocol.beginTxStep(pool, namespace, this.lease, name, `step "${name}"`);
    if (opened.recorded) return opened.result as T;
    const result = await fn();
    return (await protocol.recordStep(pool, namespace, this.lease, name, result)) as T;
  }

  async txStep<T>(name: string, fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
    this.assertLive(`transactional step "${name}"`);
    const { pool, namespace } = this.deps;
    const tx = await pool.connect();
    try {
      await tx.query('begin');
      const opened = await protocol.beginTxStep(tx, namespace, this.lease, name);
      if (opened.recorded) {
        await tx.query('rollback');
        return opened.result as T;
      }
      const result = await fn(tx);
      await protocol.recordStep(tx, namespace, this.lease, name, result);
      await tx.query('commit');
      return result;
    } catch (err) {
      await tx.query('rollback').catch(() => undefined);
      throw err;
    } finally {
      tx.release();
    }
  }

  private assertLive(what: string): void {
    if (this.abort.aborted && this.abort.reason instanceof StaleLeaseError) {
      throw new StaleLeaseError(this.job.id, this.job.execution, what);
    }
  }
}

export function createContext(job: ClaimedJob, abort: JobAbort, deps: ContextDeps): HandlerContext {
  return new JobContext(job, abort, deps);
}

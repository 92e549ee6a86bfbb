// The handler context: the claimed job, its AbortSignal, and the durable
// writes a handler can make — progress, checkpoints (`step`) and
// transactional steps (`txStep`). Every write carries (job id, execution)
// and is refused with StaleLeaseError once the fence has moved on.
import type pg from 'pg';
import * as protocol from '../db/protocol.js';
import type { ClaimedJob } from '../db/rows.js';
import { StaleLeaseError } from '../errors.js';

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

function assertLive(job: ClaimedJob, signal: AbortSignal, what: string): void {
  if (signal.aborted && signal.reason instanceof StaleLeaseError) {
    throw new StaleLeaseError(job.id, job.execution, what);
  }
}

export function createContext(job: ClaimedJob, signal: AbortSignal, deps: ContextDeps): HandlerContext {
  const lease = { id: job.id, execution: job.execution };
  const { pool, namespace } = deps;
  return {
    job,
    signal,
    workerId: deps.workerId,
    deadline: deps.deadline,
    remainingMs: () => (deps.deadline ? Math.max(0, deps.deadline.getTime() - Date.now()) : Infinity),

    async progress(value) {
      await protocol.setProgress(pool, namespace, lease, value);
    },

    async step(name, fn) {
      assertLive(job, signal, `step "${name}"`);
      // A fenced read: a stale owner is refused before `fn` runs.
      const opened = await protocol.beginTxStep(pool, namespace, lease, name, `step "${name}"`);
      if (opened.recorded) return opened.result as Awaited<ReturnType<typeof fn>>;
      const result = await fn();
      return (await protocol.recordStep(pool, namespace, lease, name, result)) as Awaited<ReturnType<typeof fn>>;
    },

    async txStep(name, fn) {
      assertLive(job, signal, `transactional step "${name}"`);
      const tx = await pool.connect();
      try {
        await tx.query('begin');
        const opened = await protocol.beginTxStep(tx, namespace, lease, name);
        if (opened.recorded) {
          await tx.query('rollback');
          return opened.result as Awaited<ReturnType<typeof fn>>;
        }
        const result = await fn(tx);
        await protocol.recordStep(tx, namespace, lease, name, result);
        await tx.query('commit');
        return result;
      } catch (err) {
        await tx.query('rollback').catch(() => undefined);
        throw err;
      } finally {
        tx.release();
      }
    },
  };
}

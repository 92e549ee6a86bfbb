// sql/protocol/operator.sql: what people do to jobs, queues and workers.
import type { Queryable } from '../queryable.js';
import { mapped } from '../sqlState.js';
import type { JobStatus } from './reads.js';

/** The status after the call, or null when the job does not exist; `cascade`: its unfinished, not detached children too. */
export function cancel(db: Queryable, ns: string, jobId: string, cascade = true): Promise<JobStatus | null> {
  return mapped({}, async () => {
    const r = await db.query<{ status: JobStatus }>('select status from workhorse.cancel_v1($1, $2, $3)', [ns, jobId, cascade]);
    return r.rows[0]?.status ?? null;
  });
}

/** The status after the call, or null when the job does not exist. */
export function retry(db: Queryable, ns: string, jobId: string): Promise<JobStatus | null> {
  return mapped({}, async () => {
    const r = await db.query<{ status: JobStatus }>('select status from workhorse.retry_v1($1, $2)', [ns, jobId]);
    return r.rows[0]?.status ?? null;
  });
}

export interface QueuePolicyChange {
  paused?: boolean;
  /** null clears the limit. */
  concurrencyLimit?: number | null;
  /** null clears the limit. */
  rateLimit?: number | null;
  /** The rate limit's period; null, like undefined, leaves it as it is. */
  ratePeriodMs?: number | null;
}

export function setQueue(db: Queryable, ns: string, queue: string, c: QueuePolicyChange): Promise<void> {
  const clearable = (v: number | null | undefined) => (v === undefined ? null : v === null ? -1 : v);
  return mapped({}, async () => {
    await db.query('select workhorse.set_queue_v1($1, $2, $3, $4, $5, $6)', [
      ns,
      queue,
      c.paused ?? null,
      clearable(c.concurrencyLimit),
      clearable(c.rateLimit),
      c.ratePeriodMs ?? null,
    ]);
  });
}

/** false when no such worker is registered. */
export function setWorkerPaused(db: Queryable, ns: string, workerId: string, paused: boolean): Promise<boolean> {
  return mapped({}, async () => {
    const r = await db.query<{ ok: boolean }>('select workhorse.set_worker_paused_v1($1, $2, $3) as ok', [ns, workerId, paused]);
    return r.rows[0]!.ok;
  });
}

// sql/protocol/claim.sql: claim due jobs for one worker. The hot path:
// rows are read as arrays in the column order of workhorse.claimed_job, and
// times arrive as epoch milliseconds.
import { mapped } from '../sqlState.js';
import type { Queryable } from '../queryable.js';

export interface ClaimRequest {
  workerId: string;
  queues: string[];
  types: string[];
  limit: number;
  leaseMs: number;
  /** A tick's time left: only jobs that fit it (fits_tick_v1). */
  maxTimeoutMs?: number | null;
  /** How many of the claimed jobs (the first, in the order returned) the worker starts at once. */
  start?: number;
}

/** A job as a claim hands it to a worker. */
export interface ClaimedJob {
  id: string;
  queue: string;
  type: string;
  payload: unknown;
  priority: number;
  runAt: Date;
  attempt: number;
  maxAttempts: number;
  /** The fence: every write for this job carries it. */
  execution: number;
  timeoutMs: number | null;
  concurrencyKey: string | null;
  progress: unknown;
  createdAt: Date;
  leaseExpiresAt: Date;
  /** W3C trace context of the span that enqueued the job ({ traceparent, tracestate? }), or null. */
  traceContext: { traceparent: string; tracestate?: string } | null;
}

/** A claim_many_v1 row (an array, in the column order of workhorse.claimed_job). */
export function toClaimedJob(r: unknown[]): ClaimedJob {
  return {
    id: String(r[0]),
    queue: r[1] as string,
    type: r[2] as string,
    payload: r[3],
    priority: r[4] as number,
    runAt: new Date(r[5] as number),
    attempt: r[6] as number,
    maxAttempts: r[7] as number,
    execution: Number(r[8]),
    timeoutMs: r[9] as number | null,
    concurrencyKey: r[10] as string | null,
    progress: r[11],
    createdAt: new Date(r[12] as number),
    leaseExpiresAt: new Date(r[13] as number),
    traceContext: (r[14] as ClaimedJob['traceContext']) ?? null,
  };
}

/** Refused with WorkerNotRegisteredError when the worker's registry row is gone. */
export function claimMany(db: Queryable, ns: string, c: ClaimRequest): Promise<ClaimedJob[]> {
  return mapped({ workerId: c.workerId, namespace: ns }, async () => {
    const r = await db.query({
      text: 'select * from workhorse.claim_many_v1($1, $2, $3, $4, $5, $6, $7, $8)',
      values: [ns, c.workerId, c.queues, c.types, c.limit, c.leaseMs, c.maxTimeoutMs ?? null, c.start ?? c.limit],
      rowMode: 'array',
    });
    return r.rows.map(toClaimedJob);
  });
}

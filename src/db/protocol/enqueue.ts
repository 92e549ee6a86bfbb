// sql/protocol/enqueue.sql: insert jobs, one statement per batch.
import { mapped } from '../sqlState.js';
import type { Queryable } from '../queryable.js';

/** A job row as enqueue_many_v1 takes it (snake_case keys, JSON-encoded). */
export interface JobInsert {
  type: string;
  queue: string;
  payload: unknown;
  priority?: number;
  run_at?: string;
  /** Added to the database's now() when run_at is absent. */
  delay_ms?: number;
  max_attempts?: number;
  backoff_kind?: 'exponential' | 'linear' | 'fixed';
  backoff_base_ms?: number;
  backoff_max_ms?: number;
  concurrency_key?: string;
  dedupe_key?: string;
  timeout_ms?: number;
  /** W3C trace context of the enqueueing span. */
  trace_context?: { traceparent: string; tracestate?: string };
}

export interface Enqueued {
  id: string;
  /** false when a job with the same dedupe key already existed; `id` is that job's. */
  created: boolean;
}

/** Results in input order. */
export function enqueueMany(db: Queryable, ns: string, jobs: JobInsert[]): Promise<Enqueued[]> {
  return mapped({}, async () => {
    const r = await db.query<{ id: string; created: boolean }>('select id, created from workhorse.enqueue_many_v1($1, $2::jsonb)', [
      ns,
      JSON.stringify(jobs),
    ]);
    return r.rows.map((x) => ({ id: String(x.id), created: x.created }));
  });
}

// Straight-SQL reads for assertions: what the database holds, independent of
// the code under test. A job is read as the protocol reports it (a ready row
// with a lease is running, at the lease's attempt and execution).
import type pg from 'pg';

export interface RawJob {
  id: string;
  status: string;
  attempt: number;
  max_attempts: number;
  execution: number;
  run_at: Date;
  updated_at: Date;
  progress: unknown;
  result: unknown;
  last_error: { name?: string; message?: string } | null;
  finished_at: Date | null;
}

export async function jobRow(db: pg.Pool, id: string): Promise<RawJob> {
  const r = await db.query<RawJob>(
    `select s.id, s.status, s.attempt, s.max_attempts, s.execution::int as execution, s.run_at, s.updated_at,
            s.progress, s.result, s.last_error, s.finished_at
       from workhorse.jobs j left join workhorse.job_runtime l on l.job_id = j.id,
            lateral workhorse.job_as_seen_v1(j, l) s
      where j.id = $1`,
    [id],
  );
  if (!r.rows[0]) throw new Error(`job ${id} not found`);
  return r.rows[0];
}

export async function countJobs(db: pg.Pool, where = 'true', values: unknown[] = []): Promise<number> {
  const r = await db.query<{ n: number }>(`select count(*)::int as n from workhorse.jobs where ${where}`, values);
  return r.rows[0]!.n;
}

export interface RawAttempt {
  execution: number;
  attempt: number;
  outcome: string;
  worker_id: string | null;
}

export async function attemptsOf(db: pg.Pool, id: string): Promise<RawAttempt[]> {
  const r = await db.query<RawAttempt>(
    'select execution::int as execution, attempt, outcome, worker_id from workhorse.job_attempts where job_id = $1 order by execution',
    [id],
  );
  return r.rows;
}

// A namespace of a realistic size for the scale tests, written straight in
// SQL (one statement per table): `n` jobs created over the last day across
// three queues, most succeeded, some failed, cancelled, ready (a few
// scheduled later), each settled one with its attempts-ledger row, and a
// rare type one job in ten thousand has. Statistics are refreshed so the
// planner sees the table as it is.
import type pg from 'pg';

export const SEED_QUEUES = ['email', 'reports', 'default'];
export const RARE_TYPE = 'rare.type';

export async function seedNamespace(db: pg.Pool, n: number, namespace = 'default'): Promise<void> {
  await db.query(
    `insert into workhorse.jobs (namespace, queue, type, payload, status, run_at, attempt, max_attempts, execution,
                                 created_at, started_at, finished_at, concurrency_key, last_error)
     select $1, (array['email','reports','default'])[1 + i % 3],
            case when i % 10000 = 0 then '${RARE_TYPE}' else (array['email.send','report.build','misc.task'])[1 + i % 3] end,
            jsonb_build_object('n', i),
            case when i % 100 < 85 then 'succeeded' when i % 100 < 90 then 'failed' when i % 100 < 92 then 'cancelled' else 'ready' end,
            t + case when i % 100 = 99 then interval '2 hours' else interval '0' end,
            case when i % 100 < 92 then 1 else 0 end, 3, case when i % 100 < 92 then 1 else 0 end,
            t, case when i % 100 < 92 then t + interval '1 second' end,
            case when i % 100 < 92 then t + interval '2 seconds' end,
            case when i % 50 = 0 then 'tenant:' || (i % 7) end,
            case when i % 100 between 85 and 89 then '{"name":"Error","message":"boom"}'::jsonb end
       from generate_series(1, $2::int) i, lateral (select now() - interval '1 day' + i * (interval '1 day' / $2::int) as t) x`,
    [namespace, n],
  );
  await db.query(
    `insert into workhorse.job_attempts (job_id, execution, attempt, namespace, worker_id, outcome, error, started_at, finished_at)
     select id, 1, 1, namespace, 'seed-' || (id % 4), case status when 'succeeded' then 'succeeded' when 'failed' then 'failed' else 'cancelled' end,
            last_error, started_at, finished_at
       from workhorse.jobs where namespace = $1 and status in ('succeeded', 'failed', 'cancelled')`,
    [namespace],
  );
  await db.query('analyze workhorse.jobs; analyze workhorse.job_attempts');
}

// Foundation: the claim and the settlement keep their plan when the lease
// table's statistics lie. The lease table churns (a row inserted and
// deleted per job) and bloats between two autovacuum visits; the planner
// then believes it holds far more leases than there are ready jobs. The
// claim used to read every ready row, hash-anti-join them with the lease
// table and sort them (hundreds of ms per claim with a large backlog), and
// a settlement planned while the table was small read every page of the
// bloated table on each batch. Both are checked from PostgreSQL's own
// counters around each statement (pg_stat_xact_user_tables): no sequential
// scan of the jobs or the lease table, and the claimed jobs are the first
// ones in claim order.
import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { createTestDatabase, registerWorkerRow, type TestDatabase } from '../helpers/db.js';

const READY = 20_000;
const CHURNED_LEASES = 300_000;

let db: TestDatabase;
let session: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase();
  // Autovacuum must not tidy the table while the test looks at it.
  await db.pool.query('alter table workhorse.job_runtime set (autovacuum_enabled = false)');
  await db.pool.query(
    `insert into workhorse.jobs (namespace, queue, type, payload, run_at)
     select 'default', 'q', 't', '{}', now() - interval '1 minute' + g * interval '1 microsecond'
       from generate_series(1, $1::integer) g`,
    [READY],
  );
  await db.pool.query('analyze workhorse.jobs');
  await registerWorkerRow(db.pool, 'default', 'w', ['t']);
  session = new pg.Client({ connectionString: db.url });
  await session.connect();
}, 60_000);

afterAll(async () => {
  await session?.end();
  await db?.drop();
});

/** Sequential scans of the two tables this backend counted so far (pending counts include earlier transactions not yet flushed). */
async function seqScans(): Promise<{ jobs: number; job_runtime: number }> {
  const stats = await session.query<{ relname: string; seq_scan: string }>(
    `select relname, seq_scan from pg_stat_xact_user_tables
      where schemaname = 'workhorse' and relname in ('jobs', 'job_runtime')`,
  );
  const seq = Object.fromEntries(stats.rows.map((r) => [r.relname, Number(r.seq_scan)]));
  return { jobs: seq.jobs ?? 0, job_runtime: seq.job_runtime ?? 0 };
}

/** Runs `sql` in a transaction on the one session and returns its rows with the sequential scans it made of the two tables. */
async function scanned<T extends pg.QueryResultRow>(sql: string, params: unknown[], commit: boolean) {
  await session.query('begin');
  try {
    const before = await seqScans();
    const rows = (await session.query<T>(sql, params)).rows;
    const after = await seqScans();
    await session.query(commit ? 'commit' : 'rollback');
    return { rows, seqScans: { jobs: after.jobs - before.jobs, job_runtime: after.job_runtime - before.job_runtime } };
  } catch (e) {
    await session.query('rollback');
    throw e;
  }
}

const CLAIM = `select id, execution from workhorse.claim_many_v1('default', 'w', '{q}', '{t}', $1, 180000)`;
const COMPLETE = `select id from workhorse.complete_many_v1('default', $1::bigint[], $2::bigint[], $3::jsonb[]) as id`;

async function complete(claimed: { id: string; execution: string }[]) {
  return scanned<{ id: string }>(
    COMPLETE,
    [claimed.map((c) => c.id), claimed.map((c) => c.execution), claimed.map(() => 'null')],
    true,
  );
}

it('claims and settles by index after churn has bloated the lease table', async () => {
  // A settlement planned (once per session) while the lease table is small.
  const first = await scanned<{ id: string; execution: string }>(CLAIM, [20], true);
  expect(first.rows).toHaveLength(20);
  expect((await complete(first.rows)).rows).toHaveLength(20);

  // Churn: as many leases as a long drain writes between two autovacuum visits, all gone again.
  await db.pool.query(
    `insert into workhorse.job_runtime (job_id, namespace, worker_id, queue, execution, expires_at)
     select -g, 'default', 'gone', 'q', 1, now() from generate_series(1, $1::integer) g`,
    [CHURNED_LEASES],
  );
  await db.pool.query('delete from workhorse.job_runtime where job_id < 0');
  const pages = await db.pool.query<{ n: string }>(`select pg_relation_size('workhorse.job_runtime') / 8192 as n`);
  expect(Number(pages.rows[0]!.n)).toBeGreaterThan(1000);

  const claim = await scanned<{ id: string; execution: string }>(CLAIM, [100], false);
  expect(claim.seqScans).toEqual({ jobs: 0, job_runtime: 0 });
  const ids = claim.rows.map((r) => Number(r.id));
  const expected = await db.pool.query<{ id: string }>(
    `select id from workhorse.jobs where status = 'ready' order by priority, run_at, id limit 100`,
  );
  expect(ids).toEqual(expected.rows.map((r) => Number(r.id)));

  const next = await scanned<{ id: string; execution: string }>(CLAIM, [50], true);
  const settled = await complete(next.rows);
  expect(settled.rows).toHaveLength(50);
  expect(settled.seqScans.job_runtime).toBe(0);
}, 60_000);

// Foundation: settlements and claims racing on the same rows never deadlock.
// A claimer whose snapshot predates a lease can lock that lease's job row
// and then wait on the lease in its ON CONFLICT; settlements (and recovery,
// deregistration) therefore lock the lease, write the job row and delete the
// lease last. Six connections claim small batches and settle them at once,
// half completing and half failing for an immediate retry, until every job
// has ended; the older order (delete the lease, then write the job) hit
// `deadlock detected` within seconds of this.
import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const JOBS = 12_000;
const BATCH = 20;
const LOOPS = 6;

let db: TestDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  db = await createTestDatabase();
  pool = new pg.Pool({ connectionString: db.url, max: LOOPS + 1 });
  pool.on('error', () => undefined);
  const jobs = Array.from({ length: JOBS }, () => ({ type: 'race', queue: 'q', payload: {}, max_attempts: 3 }));
  for (let i = 0; i < JOBS; i += 4000) {
    await pool.query('select workhorse.enqueue_many_v1($1, $2::jsonb)', ['default', JSON.stringify(jobs.slice(i, i + 4000))]);
  }
  await pool.query(`select workhorse.register_worker_v1('default', 'racer', 'b', 'process', '{q}', '{race}', 100, 45000)`);
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

async function claimAndSettle(c: pg.PoolClient, loop: number): Promise<number> {
  let settled = 0;
  for (let round = 0; ; round++) {
    const claimed = await c.query<{ id: string; execution: string }>(
      `select id, execution from workhorse.claim_many_v1('default', 'racer', '{q}', '{race}', $1, 180000)`,
      [BATCH],
    );
    if (claimed.rows.length === 0) return settled;
    const ids = claimed.rows.map((r) => r.id);
    const executions = claimed.rows.map((r) => r.execution);
    if ((loop + round) % 2 === 0) {
      await c.query(`select workhorse.complete_many_v1('default', $1::bigint[], $2::bigint[], $3::jsonb[])`, [
        ids, executions, ids.map(() => 'null'),
      ]);
    } else {
      await c.query(`select * from workhorse.fail_many_v1('default', $1::bigint[], $2::bigint[], $3::jsonb[], $4::integer[])`, [
        ids, executions, ids.map(() => '{"message":"again"}'), ids.map(() => 0),
      ]);
    }
    settled += ids.length;
  }
}

it('six claimers settling at once end every job with no deadlock', async () => {
  const clients = await Promise.all(Array.from({ length: LOOPS }, () => pool.connect()));
  try {
    const results = await Promise.allSettled(clients.map((c, i) => claimAndSettle(c, i)));
    const errors = results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []));
    expect(errors).toEqual([]);
  } finally {
    for (const c of clients) c.release();
  }
  const { rows } = await pool.query<{ status: string; n: number }>(
    `select status, count(*)::int as n from workhorse.jobs group by status order by status`,
  );
  const total = rows.reduce((sum, r) => sum + r.n, 0);
  expect(total).toBe(JOBS);
  expect(rows.every((r) => r.status === 'succeeded' || r.status === 'failed')).toBe(true);
  const leases = await pool.query<{ n: number }>('select count(*)::int as n from workhorse.job_runtime');
  expect(leases.rows[0]!.n).toBe(0);
});

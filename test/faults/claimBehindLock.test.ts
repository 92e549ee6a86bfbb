// A claim held back by a lock longer than a lease (an operator's LOCK TABLE
// or VACUUM FULL while workers run). The claim's leases ran from the start
// of its transaction, so the ones it wrote once the lock was released had
// already expired: recovery handed their jobs to another worker while the
// claimer started them, and each ran twice. A lease now runs from when it
// is written; so does a heartbeat's extension.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, type Client } from '../../src/index.js';
import { createTestDatabase, registerWorkerRow, type TestDatabase } from '../helpers/db.js';
import { sleep } from '../helpers/wait.js';

const Job = defineJob({ type: 'locked.claim', queue: 'locked', schema: z.object({}) });
const LEASE_MS = 1_000;
const LOCK_MS = 2_500;
let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Job], poolMax: 2 });
  await registerWorkerRow(db.pool, 'default', 'w-locked', [Job.type]);
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

/** Runs `statement` while another session holds `table` in ACCESS EXCLUSIVE mode for LOCK_MS. */
async function behindLock<T>(table: string, statement: (c: pg.Client) => Promise<T>): Promise<T> {
  const holder = new pg.Client({ connectionString: db.url });
  const caller = new pg.Client({ connectionString: db.url });
  await Promise.all([holder.connect(), caller.connect()]);
  try {
    await holder.query('begin');
    await holder.query(`lock table ${table} in access exclusive mode`);
    const running = statement(caller);
    await sleep(LOCK_MS);
    await holder.query('commit');
    return await running;
  } finally {
    await Promise.all([holder.end(), caller.end()]);
  }
}

const leaseLeftMs = async (id: string) =>
  Number((await db.pool.query<{ ms: number }>('select extract(epoch from expires_at - clock_timestamp()) * 1000 as ms from workhorse.job_runtime where job_id = $1', [id])).rows[0]!.ms);

describe('a claim held back by a lock longer than its lease', () => {
  it.each(['workhorse.jobs', 'workhorse.job_runtime'])('writes leases that run from when it wrote them (%s locked), and recovery leaves them alone', async (table) => {
    const { id } = await client.enqueue(Job, {});
    const claimed = await behindLock(table, (c) =>
      c.query<{ id: string; expires_at_ms: number }>('select id, expires_at_ms from workhorse.claim_many_v1($1, $2, $3, $4, 10, $5)', [
        'default',
        'w-locked',
        ['locked'],
        [Job.type],
        LEASE_MS,
      ]),
    );
    expect(claimed.rows.map((r) => String(r.id))).toEqual([id]);
    expect(Number(claimed.rows[0]!.expires_at_ms)).toBeGreaterThan(Date.now());
    expect(await leaseLeftMs(id)).toBeGreaterThan(0);
    expect(await client.admin.recoverExpired()).toBe(0);
    await db.pool.query('delete from workhorse.job_runtime where job_id = $1', [id]);
    await db.pool.query('delete from workhorse.jobs where id = $1', [id]);
  }, 30_000);

  it('a heartbeat held back by a lock extends the lease from when it wrote it', async () => {
    const { id } = await client.enqueue(Job, {});
    const claimed = await db.pool.query<{ execution: string }>('select execution from workhorse.claim_many_v1($1, $2, $3, $4, 1, $5)', [
      'default',
      'w-locked',
      ['locked'],
      [Job.type],
      LEASE_MS,
    ]);
    await behindLock('workhorse.job_runtime', (c) =>
      c.query('select * from workhorse.heartbeat_many_v1($1, $2, $3, $4, 1, $5)', ['default', 'w-locked', [id], [claimed.rows[0]!.execution], LEASE_MS]),
    );
    expect(await leaseLeftMs(id)).toBeGreaterThan(0);
    expect(await client.admin.recoverExpired()).toBe(0);
  }, 30_000);
});

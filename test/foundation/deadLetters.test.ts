// Listing dead letters: failed and cancelled jobs page newest first through
// their own partial index, so finding a handful among many succeeded rows
// does not read the whole table.
import pg from 'pg';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, defineJob, Worker, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Task = defineJob({ type: 'dead.task', schema: z.object({ i: z.number().int(), fail: z.boolean() }), retry: { maxAttempts: 1 } });

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Task], poolMax: 4 });
});

afterAll(async () => {
  await client.close();
  await db.drop();
});

describe('dead letters', () => {
  it('pages failed and cancelled jobs newest first, each status on its own, through the dead-jobs index', async () => {
    const total = 3_000;
    const failing = new Set([10, 700, 1_500, 2_999]);
    const ids = (
      await client.enqueueMany(Array.from({ length: total }, (_, i) => ({ job: Task, payload: { i, fail: failing.has(i) } })))
    ).map((r) => r.id);
    const cancelled = [ids[5]!, ids[2_000]!];
    for (const id of cancelled) await client.cancel(id);

    let settled = 0;
    const worker = new Worker(client, { concurrency: 8, prefetch: 200, pollMs: 50 }).handle(Task, (p) => {
      if (p.fail) throw new Error(`job ${p.i} failed`);
    });
    worker.events.on('settled', () => settled++);
    const run = worker.run();
    await waitFor(async () => settled, (n) => n === total - cancelled.length, { what: 'every job to settle' });
    await worker.stop();
    await run;

    const failedIds = [...failing].map((i) => ids[i]!).reverse();
    const page1 = await client.admin.listJobs({ status: 'failed', limit: 3 });
    expect(page1.jobs.map((j) => j.id)).toEqual(failedIds.slice(0, 3));
    const page2 = await client.admin.listJobs({ status: 'failed', limit: 3, cursor: page1.nextCursor! });
    expect(page2.jobs.map((j) => j.id)).toEqual(failedIds.slice(3));
    expect((await client.admin.listJobs({ status: 'cancelled' })).jobs.map((j) => j.id)).toEqual([...cancelled].reverse());
    expect((await client.admin.listJobs({ status: 'succeeded', limit: 2 })).jobs.map((j) => j.status)).toEqual(['succeeded', 'succeeded']);

    // The listing walked jobs_dead_idx: its scan count, read on one session
    // with the session's statistics flushed, went up.
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      await c.query('analyze workhorse.jobs');
      const scans = async () => {
        await c.query('select pg_stat_force_next_flush()');
        await c.query('select 1');
        const r = await c.query<{ n: string }>(
          "select idx_scan as n from pg_stat_user_indexes where schemaname = 'workhorse' and indexrelname = 'jobs_dead_idx'",
        );
        return Number(r.rows[0]!.n);
      };
      const before = await scans();
      const r = await c.query('select id from workhorse.list_jobs_v1($1, $2, null, null, 10, null)', [client.namespace, 'failed']);
      expect(r.rows).toHaveLength(failing.size);
      expect(await scans()).toBeGreaterThan(before);
    } finally {
      await c.end();
    }
  });
});

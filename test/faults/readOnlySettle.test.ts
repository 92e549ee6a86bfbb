// A database that refuses writes for a while (25006, read_only_sql_transaction:
// connections that reached a standby, as after a switchover or before a
// failover's DNS change has moved) is a fault to wait out, not a refusal:
// handlers that finish meanwhile keep their outcomes, and their settlements
// go through once writes are accepted again, with no job recovered and no
// attempt counted twice. Simulated on this test's own database with
// default_transaction_read_only and its backends terminated, so every new
// connection is read-only; the shared server itself is not touched.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { z } from 'zod';
import { createClient, defineJob, Worker } from '../../src/index.js';
import { retryTransient } from '../../src/db/retryTransient.js';
import { isTransientDbError } from '../../src/db/transient.js';
import { describeError } from '../../src/http/middleware/errorHandler.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { setReadOnly } from '../helpers/readOnly.js';
import { sleep, waitFor } from '../helpers/wait.js';

const Held = defineJob({ type: 'readonly.held', queue: 'readonly', schema: z.object({ n: z.number() }) });

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/**
 * A read of the test's own pool: setReadOnly terminates this pool's idle
 * connections too, and one may be lent out before its error arrives, so a
 * terminated connection is tried again (the pool drops it).
 */
async function read<R extends pg.QueryResultRow>(sql: string): Promise<pg.QueryResult<R>> {
  return retryTransient(() => db.pool.query<R>(sql), { attempts: 5, baseMs: 50, maxMs: 500 });
}


describe('a read-only database', () => {
  it('holds finished handlers\' settlements until writes are accepted again: none is recovered or run twice', async () => {
    const client = createClient({ connectionString: db.url, jobs: [Held], poolMax: 4 });
    const worker = new Worker(client, { queue: 'readonly', concurrency: 5, heartbeatMs: 2_000, listen: false, pollMs: 100 });
    const errors: unknown[] = [];
    worker.events.on('error', (err) => errors.push(err));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const runs: number[] = [];
    worker.handle(Held, async ({ n }) => {
      runs.push(n);
      await gate;
      return { n };
    });
    const running = worker.run();
    try {
      await client.enqueueMany([0, 1, 2, 3, 4].map((n) => ({ job: Held, payload: { n } })));
      await waitFor(() => runs.length, (n) => n === 5, { timeoutMs: 10_000, what: 'five handlers running' });
      await setReadOnly(db, true);
      // The handlers finish while every write is refused; the settlements wait.
      release();
      await sleep(3_000);
      const during = await read<{ n: number }>(`select count(*)::int as n from workhorse.jobs where status = 'succeeded'`);
      expect(during.rows[0]!.n).toBe(0);
      expect(errors.some((e) => (e as { code?: string }).code === '25006' || String(e).includes('read-only'))).toBe(true);
      await setReadOnly(db, false);
      await waitFor(
        async () => (await read<{ n: number }>(`select count(*)::int as n from workhorse.jobs where status = 'succeeded'`)).rows[0]!.n,
        (n) => n === 5,
        { timeoutMs: 15_000, what: 'five jobs succeeded' },
      );
      const jobs = await read<{ attempt: number }>(`select attempt from workhorse.jobs order by id`);
      expect(jobs.rows.map((r) => r.attempt)).toEqual([1, 1, 1, 1, 1]);
      const ledger = await read(`select outcome from workhorse.job_attempts`);
      expect(ledger.rows).toEqual([]);
      expect(runs.sort()).toEqual([0, 1, 2, 3, 4]);
    } finally {
      await setReadOnly(db, false).catch(() => undefined);
      await worker.stop();
      await running;
      await client.close();
    }
  }, 60_000);

  it('is a database fault like a dropped connection: retried by the data layer, and 503 database_unreachable over HTTP', () => {
    const refused = Object.assign(new Error('cannot execute INSERT in a read-only transaction'), { code: '25006' });
    expect(isTransientDbError(refused)).toBe(true);
    expect(describeError(refused)).toMatchObject({ status: 503, body: { code: 'database_unreachable' } });
  });
});

// A read-only period (25006: a standby after a failover, or
// default_transaction_read_only) shorter than the lease, met by a
// transactional step or a spawn as it begins: its own opening statement is
// refused, its transaction rolled back, nothing of it took effect, so it is
// run again on a new connection once writes are accepted, and no attempt
// is counted. It used to fail the attempt with "the database connection
// broke", and a job of maxAttempts 1 failed for good. Simulated on this
// test's own database (default_transaction_read_only and its backends
// terminated); the shared server is not touched.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, Worker } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { resetReadOnly, setReadOnly } from '../helpers/readOnly.js';
import { sleep, waitFor } from '../helpers/wait.js';

const Stepper = defineJob({ type: 'ro.txstep', queue: 'ro', schema: z.object({ n: z.number() }), retry: { maxAttempts: 1 } });
const Child = defineJob({ type: 'ro.child', queue: 'ro', schema: z.object({}) });

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query('create table ro_effects (job_id bigint, n int)');
});
afterAll(async () => {
  await resetReadOnly(db);
  await db?.drop();
});


describe('a transactional step or a spawn begun while the database is read-only', () => {
  it('runs once writes are accepted again: no attempt counted, its effect written once', async () => {
    const client = createClient({ connectionString: db.url, jobs: [Stepper, Child], poolMax: 4 });
    // A 12 s lease: the 2.5 s read-only spell stays well inside it on a loaded machine.
    const worker = new Worker(client, { queue: 'ro', concurrency: 4, heartbeatMs: 3_000, listen: false, pollMs: 100 });
    worker.events.on('error', () => undefined);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started = 0;
    worker.handle(Stepper, async ({ n }, ctx) => {
      started++;
      await gate;
      await ctx.txStep('write', async (tx) => {
        await tx.query('insert into ro_effects (job_id, n) values ($1, $2)', [ctx.job.id, n]);
      });
      await ctx.spawn('kid', Child, {});
      return { n };
    });
    worker.handle(Child, async () => 'ok');
    const running = worker.run();
    try {
      const jobs = await client.enqueueMany([1, 2, 3].map((n) => ({ job: Stepper, payload: { n } })));
      await waitFor(() => started, (s) => s === 3, { what: 'the three handlers to start' });
      await setReadOnly(db, true);
      // The handlers reach their transactional step while the database is read-only.
      release();
      await sleep(2_500);
      await setReadOnly(db, false);
      const ids = jobs.map((j) => j.id);
      const rows = await waitFor(
        async () =>
          (
            await db.pool.query<{ status: string; attempt: number; last_error: unknown }>(
              'select status, attempt, last_error from workhorse.jobs where id = any($1::bigint[]) order by id',
              [ids],
            )
          ).rows,
        (r) => r.every((x) => x.status !== 'ready' && x.status !== 'running'),
        { what: 'the three jobs to end', timeoutMs: 20_000 },
      );
      // A job that failed says why.
      expect(rows.map(({ status, attempt }) => ({ status, attempt })), JSON.stringify(rows.map((r) => r.last_error))).toEqual(
        [1, 2, 3].map(() => ({ status: 'succeeded', attempt: 1 })),
      );
      const effects = await db.pool.query<{ n: number }>('select n from ro_effects order by n');
      expect(effects.rows.map((r) => r.n)).toEqual([1, 2, 3]);
      const children = await db.pool.query<{ n: number }>("select count(*)::int n from workhorse.jobs where type = 'ro.child'");
      expect(children.rows[0]!.n).toBe(3);
      const recovered = await db.pool.query<{ n: number }>("select count(*)::int n from workhorse.job_attempts where outcome = 'recovered'");
      expect(recovered.rows[0]!.n).toBe(0);
    } finally {
      await worker.stop();
      await running;
      await client.close();
    }
  }, 60_000);
});

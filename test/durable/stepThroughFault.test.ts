// A step's fenced writes wait out a database fault while the job holds its
// lease, as settlements do. They were tried 4 times within about 0.7 s and
// then failed the attempt: a read-only spell of a few seconds (a failover)
// used up an attempt, and failed a job of maxAttempts 1 for good. Here the
// database turns read-only for 2 s just as the step starts (sessions
// terminated so every new one is read-only), and the job still succeeds on
// its first attempt, its step run once.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../../src/index.js';
import { startRunningWorker, type RunningWorker } from '../helpers/runningWorker.js';
import { waitFor } from '../helpers/wait.js';

const Once = defineJob({ type: 'fault.step', schema: z.object({}), retry: { maxAttempts: 1 } });
let release!: () => void;
const gate = new Promise<void>((r) => (release = r));
let started = false;
let bodies = 0;
let w: RunningWorker;

beforeAll(async () => {
  w = await startRunningWorker([Once], { heartbeatMs: 1_000, pollMs: 50 }, (worker) =>
    worker.handle(Once, async (_p, ctx) => {
      started = true;
      await gate;
      return ctx.step('write', () => ++bodies);
    }),
  );
});

afterAll(async () => {
  await w?.stop();
});


describe('a step meeting a read-only spell of 2 s', () => {
  it('waits it out: the job succeeds on its first attempt, the step run once', async () => {
    const dbName = new URL(w.db.url).pathname.slice(1);
    // One session of the test's own, begun writable, that the terminations spare.
    const admin = new pg.Client({ connectionString: w.db.url });
    await admin.connect();
    try {
      const { id } = await w.client.enqueue(Once, {});
      await waitFor(() => started, Boolean, { what: 'the handler to start' });
      await admin.query(`alter database "${dbName}" set default_transaction_read_only = on`);
      await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
      release();
      await new Promise((r) => setTimeout(r, 2_000));
      await admin.query(`alter database "${dbName}" reset default_transaction_read_only`);
      const job = await waitFor(() => w.client.getJob(id), (j) => j?.status === 'succeeded' || j?.status === 'failed', { what: 'the job to end', timeoutMs: 30_000 });
      expect(job).toMatchObject({ status: 'succeeded', attempt: 1, result: 1 });
      expect(bodies).toBe(1);
    } finally {
      await admin.end();
    }
  }, 60_000);
});

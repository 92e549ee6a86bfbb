// Heartbeats that cannot get through while claims can (a lock on the
// registry, as a plain CREATE INDEX on it takes): once no beat had reached
// the database for a whole lease, the worker gave up every lease it held,
// the ones it had claimed a moment before included, whose leases in the
// database were fresh. Their handlers were aborted and their jobs failed
// (maxAttempts 1) though nothing was wrong with them. A lease now runs out a
// whole lease after its last extension: the last beat, or its claim.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, Worker, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { sleep, waitFor } from '../helpers/wait.js';

const Work = defineJob({ type: 'hbblocked.work', schema: z.object({ n: z.number() }), retry: { maxAttempts: 1 } });
let db: TestDatabase;
let client: Client;
let worker: Worker;
let running: Promise<void>;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Work], poolMax: 6 });
  // A 1 s heartbeat: a 4 s lease.
  worker = new Worker(client, { concurrency: 8, pollMs: 50, heartbeatMs: 1_000 });
  worker.events.on('error', () => undefined);
  worker.events.on('stale', () => undefined);
  worker.handle(Work, async ({ n }) => {
    await sleep(1_500);
    return n;
  });
  running = worker.run();
  await waitFor(() => worker.runtimeState().registered, Boolean, { what: 'registration' });
});

afterAll(async () => {
  await worker?.stop();
  await running;
  await client?.close();
  await db?.drop();
});

describe('heartbeats blocked while claims go through', () => {
  it('leave the leases claimed since the last beat alone: their jobs run to success', async () => {
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('lock table workhorse.worker_registry in share mode');
      // No beat has gone through for longer than the lease when the jobs are claimed.
      await sleep(4_500);
      const ids = (await client.enqueueMany(Array.from({ length: 8 }, (_, n) => ({ job: Work, payload: { n } })))).map((j) => j.id);
      const finished = async () => (await db.pool.query<{ n: number }>("select count(*)::int as n from workhorse.jobs where status in ('succeeded', 'failed')")).rows[0]!.n;
      await waitFor(finished, (n) => n === 8, {
        timeoutMs: 15_000,
        what: 'the eight jobs to finish',
      });
      await holder.query('commit');
      const jobs = await Promise.all(ids.map((id) => client.getJob(id)));
      expect(jobs.map((j) => [j!.status, j!.attempt])).toEqual(ids.map(() => ['succeeded', 1]));
    } finally {
      await holder.end();
    }
  }, 40_000);
});

// A rate-limited queue runs at its rate, not at the pace of the workers'
// safety poll. A claim the rate held back now sends the queue a wake hint
// for when the bucket holds what it wanted again; the workers slept until
// their next poll, so `rateLimit: 2` per second ran at about 1.6 jobs a
// second with the default 1 s poll, and at a tenth of its rate with a 10 s
// one. Real workers, their LISTEN, and a real PostgreSQL.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, Worker, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Paced = defineJob({ type: 'pace.job', schema: z.object({ n: z.number() }), queue: 'paced' });

let db: TestDatabase;
let client: Client;
beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Paced] });
});
afterAll(async () => {
  await client?.close();
  await db?.drop();
});

it('wakes its claimers when the rate allows more, whatever their poll: 6 jobs at 2 per second start within seconds, and within the rate', async () => {
  await client.admin.setQueueLimits('paced', { rateLimit: 2, ratePeriodMs: 1000 });
  const started: number[] = [];
  // Two workers sharing the queue, each with room for every job and a safety poll of 30 s: without the hint,
  // the jobs past the bucket's first two waited for that poll.
  const workers = ['a', 'b'].map((id) => {
    const w = new Worker(client, { workerId: `pace-${id}`, queue: 'paced', concurrency: 10, pollMs: 30_000, maxPollMs: 30_000 });
    w.handle(Paced, () => void started.push(Date.now()));
    return w;
  });
  const runs = workers.map((w) => w.run());
  try {
    // Both listening before the jobs come.
    await waitFor(async () => (await db.pool.query<{ n: number }>("select count(*)::int n from pg_stat_activity where datname = current_database() and query ilike 'listen%'")).rows[0]!.n, (n) => n >= 2, {
      what: 'both workers to listen',
      timeoutMs: 10_000,
    });
    await client.enqueueMany(Array.from({ length: 6 }, (_, n) => ({ job: Paced, payload: { n } })));
    await waitFor(async () => started.length, (n) => n === 6, { what: 'all six jobs to start', timeoutMs: 15_000 });
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await Promise.all(runs);
  }
  // Within the rate: the database spent one token per start, and the bucket (2) never went below zero.
  const { rows } = await db.pool.query<{ tokens: number }>("select tokens from workhorse.queues where name = 'paced'");
  expect(rows[0]!.tokens).toBeGreaterThanOrEqual(0);
  expect(started).toHaveLength(6);
});

// LISTEN/NOTIFY wake-ups: an idle worker whose safety poll is long (two
// minutes here) still picks up a newly enqueued job at once, because enqueue
// notifies the job's queue. The hint carries no truth; it only ends the wait.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { sleep, waitFor } from '../helpers/wait.js';
import { jobRow } from './support/rows.js';

const Hello = defineJob({ type: 'fx.hello', schema: z.object({ n: z.number() }) });
const POLL_MS = 120_000;

let db: TestDatabase;
let client: Client;
const workers: Worker[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Hello], poolMax: 4 });
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

async function idleWorker(id: string): Promise<Worker> {
  const w = new Worker(client, { workerId: id, pollMs: POLL_MS, heartbeatMs: 60_000 }).handle(Hello, () => 'hi');
  workers.push(w);
  void w.run();
  await waitFor(() => w.runtimeState().registered, Boolean, { what: 'registration' });
  // Its LISTEN connection is up once the server shows the LISTEN statement.
  await waitFor(
    async () =>
      (
        await db.pool.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity where datname = current_database() and query ilike 'listen %'`,
        )
      ).rows[0]!.n,
    (n) => n >= workers.filter((x) => x.runtimeState().registered).length,
    { what: 'the LISTEN connection' },
  );
  // Let its first (empty) claim pass; it now waits on the long poll.
  await sleep(100);
  return w;
}

describe('LISTEN wake-ups', () => {
  it('makes an idle worker with a two-minute safety poll pick up a newly enqueued job long before the poll', async () => {
    await idleWorker('listener');
    const { id } = await client.enqueue(Hello, { n: 1 });
    // Far inside the two-minute poll: only the NOTIFY can have woken it.
    await waitFor(() => jobRow(db.pool, id), (j) => j.status === 'succeeded', { timeoutMs: 20_000, what: 'the woken worker to run the job' });
  });

  it('wakes an idle worker when a paused queue is resumed', async () => {
    await client.admin.pauseQueue('default');
    const { id } = await client.enqueue(Hello, { n: 2 });
    await idleWorker('resume-listener');
    expect((await jobRow(db.pool, id)).status).toBe('ready');
    await client.admin.resumeQueue('default');
    await waitFor(() => jobRow(db.pool, id), (j) => j.status === 'succeeded', { timeoutMs: 20_000, what: 'the resumed job to run' });
  });

  it('does not need the hint: a worker with listen off finds the job on its safety poll', async () => {
    const w = new Worker(client, { workerId: 'poller', listen: false, pollMs: 50, heartbeatMs: 60_000 }).handle(Hello, () => 'hi');
    workers.push(w);
    void w.run();
    await waitFor(() => w.runtimeState().registered, Boolean);
    const { id } = await client.enqueue(Hello, { n: 3 });
    await waitFor(() => jobRow(db.pool, id), (j) => j.status === 'succeeded', { what: 'the polled job to run' });
  });
});

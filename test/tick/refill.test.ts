// A tick refills free slots as handlers finish: in a batch with one 3 s job
// and twenty 50 ms jobs, the short ones all finish while the long one is
// still running, instead of each batch waiting for its slowest job. The
// untilEmpty rule still holds: the tick returns once a claim finds nothing
// and nothing is running.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineApp, defineJob, runTick, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const Nap = defineJob({ type: 'refill.nap', schema: z.object({ ms: z.number().int().min(0) }) });
const app = defineApp({
  jobs: [Nap],
  configure(worker) {
    worker.handle(Nap, async ({ ms }) => {
      await new Promise((r) => setTimeout(r, ms));
      return { ms };
    });
  },
});

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Nap], poolMax: 2 });
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

describe('a tick refilling its slots', () => {
  it('finishes twenty 50 ms jobs while one 3 s job of the same batch still runs, then returns once all are done', async () => {
    const long = await client.enqueue(Nap, { ms: 3_000 });
    const short = await client.enqueueMany(Array.from({ length: 20 }, () => ({ job: Nap, payload: { ms: 50 } })));
    const startedAt = Date.now();
    const summary = await runTick({ app, connectionString: db.url, deadline: new Date(Date.now() + 20_000), concurrency: 4, heartbeatMs: 1_000 });
    const tookMs = Date.now() - startedAt;
    expect(summary).toMatchObject({ claimed: 21, succeeded: 21, failed: 0, retried: 0 });

    const r = await db.pool.query<{ id: string; started: number; finished: number }>(
      `select id::text, extract(epoch from started_at) * 1000 as started, extract(epoch from finished_at) * 1000 as finished
         from workhorse.jobs`,
    );
    const byId = new Map(r.rows.map((x) => [x.id, { started: Number(x.started), finished: Number(x.finished) }]));
    const longRun = byId.get(long.id)!;
    const shortRuns = short.map((s) => byId.get(s.id)!);
    // The long job was claimed in the first batch (one claim: one started_at), beside three short ones.
    expect(shortRuns.filter((s) => s.started === longRun.started)).toHaveLength(3);
    // Every short job was done long before the long one: 20 x 50 ms over 3 slots is ~350 ms, not 3 s per batch.
    const lastShort = Math.max(...shortRuns.map((s) => s.finished));
    expect(lastShort).toBeLessThan(longRun.started + 1_500);
    expect(lastShort).toBeLessThan(longRun.finished);
    // untilEmpty: it returned soon after the long job, not at its deadline.
    expect(tookMs).toBeLessThan(3_000 + 2_000);
  });
});

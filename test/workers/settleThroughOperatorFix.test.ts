// A settlement the database refuses until an operator acts (here the
// protocol function it calls was dropped, SQLSTATE 42883) is written again
// while the worker holds the leases, and counts toward the claim hold-back:
// the worker stops claiming instead of running jobs whose outcomes it would
// throw away, tells the operator to run `workhorse migrate`, and once that
// ran every job succeeds on its first attempt. Before, each settlement gave
// up at once, the worker kept claiming, and recovery charged attempts until
// the queue was `failed` with every handler having succeeded.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, Worker, type Client } from '../../src/index.js';
import { migrate } from '../../src/db/migrate.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Quick = defineJob({ type: 'opfix.quick', schema: z.object({}), retry: { maxAttempts: 1 } });
let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Quick], poolMax: 4 });
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

afterEach(() => {
  vi.restoreAllMocks();
});

const count = async (sql: string) => (await db.pool.query<{ n: number }>(sql)).rows[0]!.n;

describe('a settlement refused until an operator acts', () => {
  it('is written again while the leases hold, holds claims back, says to migrate, and every job succeeds once it is fixed', async () => {
    await client.enqueueMany(Array.from({ length: 40 }, () => ({ job: Quick, payload: {} })));
    await db.pool.query('drop function workhorse.complete_many_v1(text, bigint[], bigint[], jsonb[])');
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void lines.push(a.map(String).join(' ')));
    let runs = 0;
    // A 2 s heartbeat: an 8 s lease, the window the refused settlements are written again in.
    const worker = new Worker(client, { concurrency: 2, pollMs: 50, heartbeatMs: 2_000 });
    worker.handle(Quick, async () => {
      runs++;
      return 'ok';
    });
    const run = worker.run();
    try {
      await waitFor(() => count('select count(*)::int n from workhorse.job_runtime'), (n) => n >= 4, { what: 'the settlements to pile up' });
      await new Promise((r) => setTimeout(r, 1_500));
      // Claims held back at about three capacities (2 running + 2 × 2 awaiting settlement), not all 40 claimed.
      // Settlements count against claims only once a write has failed, so claims sent while the first
      // write is still in flight may take one capacity more (8 was seen once).
      expect(await count('select count(*)::int n from workhorse.job_runtime')).toBeLessThanOrEqual(8);
      expect(lines.some((l) => l.includes('run `workhorse migrate` to reinstall it') && l.includes('(42883)'))).toBe(true);
      expect(lines.filter((l) => l.includes('gave up writing'))).toEqual([]);
      expect(worker.runtimeState().droppedOutcomes).toBe(0);

      await migrate({ connectionString: db.url });
      await waitFor(
        () => count("select count(*)::int n from workhorse.jobs where status = 'succeeded'"),
        (n) => n === 40,
        { what: 'every job to succeed', timeoutMs: 30_000 },
      );
      expect(await count('select count(*)::int n from workhorse.jobs where attempt <> 1')).toBe(0);
      expect(await count('select count(*)::int n from workhorse.job_attempts')).toBe(0);
      expect(runs).toBe(40);
      expect(worker.runtimeState().droppedOutcomes).toBe(0);
    } finally {
      await worker.stop();
      await run;
    }
  }, 60_000);
});

// While a worker's settlement writes keep failing (here every complete_many
// is cancelled, as a 3 ms statement_timeout cancelled them in a fault run),
// the worker stops claiming once the jobs awaiting settlement pass twice its
// capacity, instead of running ever more jobs whose outcomes it cannot
// write (that run's worker held 1,508 leases at concurrency 20). Once the
// writes go through again, it claims and finishes everything. Claims,
// leases and the rest run on the real database; only the completion's
// statement is replaced by one PostgreSQL would have cancelled.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, Worker, type Client } from '../../src/index.js';
import { postgresProtocol, type Protocol } from '../../src/db/protocol.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Quick = defineJob({ type: 'csf.quick', schema: z.object({}) });
let db: TestDatabase;
let client: Client;
let cancelling = true;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Quick], poolMax: 4 });
  const protocol: Protocol = {
    ...postgresProtocol,
    completeMany: (q, ns, items) =>
      cancelling
        ? Promise.reject(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }))
        : postgresProtocol.completeMany(q, ns, items),
  };
  Object.defineProperty(client, 'protocol', { value: protocol });
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

const leases = async () => (await db.pool.query<{ n: number }>('select count(*)::int n from workhorse.job_runtime')).rows[0]!.n;

describe('a worker whose settlements keep failing', () => {
  it('holds at most three capacities of leases, and finishes every job once the writes go through', async () => {
    await client.enqueueMany(Array.from({ length: 60 }, () => ({ job: Quick, payload: {} })));
    const worker = new Worker(client, { concurrency: 2, pollMs: 50, heartbeatMs: 5_000 });
    worker.events.on('error', () => undefined);
    worker.handle(Quick, async () => 'ok');
    const run = worker.run();
    try {
      await waitFor(leases, (n) => n >= 4, { what: 'the settlements to pile up' });
      await new Promise((r) => setTimeout(r, 1_500));
      const held = await leases();
      expect(held).toBeGreaterThanOrEqual(4);
      expect(held).toBeLessThanOrEqual(6);
      cancelling = false;
      await waitFor(
        async () => (await db.pool.query<{ n: number }>("select count(*)::int n from workhorse.jobs where status = 'succeeded'")).rows[0]!.n,
        (n) => n === 60,
        { what: 'every job to succeed', timeoutMs: 30_000 },
      );
    } finally {
      cancelling = false;
      await worker.stop();
      await run;
    }
  }, 60_000);
});

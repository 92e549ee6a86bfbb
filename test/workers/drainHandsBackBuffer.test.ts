// A stopping worker's drain begins: its registry row says draining (it said
// active until it was deleted), and the jobs it claimed ahead (prefetch) and
// never started go back to ready, with no attempt counted, while its running
// handlers finish. They were held for the whole drain (as long as its
// slowest handler ran), and for a whole lease when the drain then ended at
// once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, Worker, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Slow = defineJob({ type: 'drain.slow', schema: z.object({}) });
let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Slow] });
});
afterAll(async () => {
  await client?.close();
  await db?.drop();
});

const leases = async () => (await db.pool.query<{ n: number }>('select count(*)::int n from workhorse.job_runtime')).rows[0]!.n;

describe('a stopping worker', () => {
  it('is marked draining and hands back its unstarted buffer when the drain begins, while its running handler finishes', async () => {
    let release!: () => void;
    const running = new Promise<void>((r) => (release = r));
    const worker = new Worker(client, { concurrency: 1, prefetch: 3, pollMs: 50 });
    worker.handle(Slow, () => running.then(() => 'done'));
    const ids = (await client.enqueueMany([0, 1, 2, 3].map(() => ({ job: Slow, payload: {} })))).map((r) => r.id);
    const run = worker.run();
    await waitFor(leases, (n) => n === 4, { what: 'one running and three buffered', intervalMs: 20 });

    const stopped = worker.stop();
    // The drain waits for the running handler (released below); the buffer is back meanwhile.
    await waitFor(leases, (n) => n === 1, { what: 'the buffer handed back', intervalMs: 20, timeoutMs: 5_000 });
    // A claim does not write the job row: a handed-back job is a ready row with no lease.
    const back = await db.pool.query<{ n: number }>(
      `select count(*)::int n from workhorse.jobs j
        where j.id = any($1) and j.status = 'ready' and j.attempt = 0
          and not exists (select 1 from workhorse.job_runtime r where r.job_id = j.id)`,
      [ids],
    );
    expect(back.rows[0]!.n).toBe(3);
    const ledger = await db.pool.query<{ n: number }>("select count(*)::int n from workhorse.job_attempts where outcome = 'released'");
    expect(ledger.rows[0]!.n).toBe(3);
    // The Workers page reads the row's state: it said active until the row was deleted.
    const state = await db.pool.query<{ state: string }>('select state from workhorse.worker_registry where id = $1', [worker.workerId]);
    expect(state.rows.map((r) => r.state)).toEqual(['draining']);

    release();
    await stopped;
    await run;
    expect(await leases()).toBe(0);
    const done = await db.pool.query<{ n: number }>("select count(*)::int n from workhorse.jobs where status = 'succeeded'");
    expect(done.rows[0]!.n).toBe(1);
    expect((await db.pool.query('select count(*)::int n from workhorse.worker_registry')).rows[0].n).toBe(0);
  });

  it('hands back a lease only at the execution it names: a job claimed again since (another process under the same id) keeps its lease', async () => {
    const { id } = await client.enqueue(Slow, {}, { queue: 'shared' });
    const w = { workerId: 'shared-id', build: 'b', kind: 'process' as const, queues: ['shared'], types: ['drain.slow'], concurrency: 1, heartbeatMs: 1000 };
    await client.protocol.registerWorker(db.pool, 'default', w);
    const [claimed] = await client.protocol.claimMany(db.pool, 'default', { workerId: w.workerId, queues: w.queues, types: w.types, limit: 1, leaseMs: 60_000 });
    expect(claimed!.id).toBe(id);
    const stale = { id, execution: claimed!.execution - 1 };
    expect(await client.protocol.beginDrain(db.pool, 'default', w.workerId, [stale])).toBe(0);
    expect(await leases()).toBe(1);
    expect(await client.protocol.beginDrain(db.pool, 'default', w.workerId, [{ id, execution: claimed!.execution }])).toBe(1);
    expect(await leases()).toBe(0);
    await client.protocol.deregisterWorker(db.pool, 'default', w.workerId, []);
  });
});

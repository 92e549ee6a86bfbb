// Foundation (4) and queue policy: a concurrency key (gate) lets at most one
// job per key run at a time across every worker; a queue's fleet-wide
// concurrency limit and its rate limit hold however many workers claim.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import * as protocol from '../../src/db/protocol.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, registerWorkerRow, type TestDatabase } from '../helpers/db.js';
import { sleep, waitFor } from '../helpers/wait.js';
import { countJobs } from './support/rows.js';

const Rebuild = defineJob({ type: 'fx.rebuild', schema: z.object({ tenant: z.string().optional(), n: z.number() }) });
const Limited = defineJob({ type: 'fx.limited', schema: z.object({ n: z.number() }), queue: 'limited' });
const Rated = defineJob({ type: 'fx.rated', schema: z.object({ n: z.number() }), queue: 'rated' });

let db: TestDatabase;
let client: Client;
const workers: Worker[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Rebuild, Limited, Rated], poolMax: 12 });
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

/** Tracks how many handlers run at once, overall and per key. */
class Overlap {
  private readonly now = new Map<string, number>();
  readonly max = new Map<string, number>();
  enter(key: string): void {
    const n = (this.now.get(key) ?? 0) + 1;
    this.now.set(key, n);
    this.max.set(key, Math.max(n, this.max.get(key) ?? 0));
  }
  leave(key: string): void {
    this.now.set(key, this.now.get(key)! - 1);
  }
}

function startWorkers(count: number, options: { queue: string }, configure: (w: Worker) => void): void {
  for (let i = 0; i < count; i++) {
    const w = new Worker(client, { ...options, workerId: `${options.queue}-w${i}`, concurrency: 4, heartbeatMs: 1000, pollMs: 20, listen: false });
    configure(w);
    workers.push(w);
    void w.run();
  }
}

describe('gates (concurrency keys)', () => {
  it('never run two ready jobs with the same concurrency_key at the same time across workers', async () => {
    const overlap = new Overlap();
    startWorkers(3, { queue: 'default' }, (w) =>
      w.handle(Rebuild, async (p) => {
        const key = p.tenant ?? `free-${p.n}`;
        overlap.enter(key);
        overlap.enter('all');
        await sleep(15);
        overlap.leave('all');
        overlap.leave(key);
      }),
    );
    const tenants = ['acme', 'globex', 'initech'];
    const items = [];
    for (let n = 0; n < 8; n++) {
      for (const tenant of tenants) items.push({ job: Rebuild, payload: { tenant, n }, options: { concurrencyKey: `rebuild:${tenant}` } });
      items.push({ job: Rebuild, payload: { n } });
    }
    await client.enqueueMany(items);

    await waitFor(() => countJobs(db.pool, `status = 'succeeded'`), (n) => n === items.length, { what: 'every job to succeed' });
    for (const t of tenants) expect(overlap.max.get(t)).toBe(1);
    // Keys do not serialise unrelated work: different keys ran side by side.
    expect(overlap.max.get('all')).toBeGreaterThan(1);
    // Every gate was released.
    expect((await db.pool.query('select * from workhorse.job_gates')).rows).toEqual([]);
  });

  it('holds the gate while its job runs and hands it to the next job once the first settles', async () => {
    const a = await client.enqueue(Rebuild, { n: 1 }, { concurrencyKey: 'solo', priority: -5 });
    const b = await client.enqueue(Rebuild, { n: 2 }, { concurrencyKey: 'solo', priority: -5 });
    let release!: () => void;
    const blocked = new Promise<void>((r) => (release = r));
    const ran: number[] = [];
    const w1 = new Worker(client, { workerId: 'gate-1', concurrency: 2, listen: false, heartbeatMs: 60_000 });
    const w2 = new Worker(client, { workerId: 'gate-2', concurrency: 2, listen: false, heartbeatMs: 60_000 });
    workers.push(w1, w2);
    w1.handle(Rebuild, async (p) => {
      ran.push(p.n);
      await blocked;
    });
    w2.handle(Rebuild, async (p) => void ran.push(p.n));

    const first = w1.runOnce();
    await waitFor(() => ran.length, (n) => n === 1);
    expect(ran).toEqual([1]);
    // The other job is ready but its key is held: neither worker claims it.
    expect(await w2.runOnce()).toBe(false);
    expect((await client.getJob(b.id))!.status).toBe('ready');
    const gate = await db.pool.query('select key, job_id from workhorse.job_gates');
    expect(gate.rows).toEqual([{ key: 'solo', job_id: a.id }]);

    release();
    await first;
    expect(await w2.runOnce()).toBe(true);
    expect(ran).toEqual([1, 2]);
    expect((await client.getJob(b.id))!.status).toBe('succeeded');
  });

  it("releases a crashed job's gate through the recovery pass so the key's next job can run", async () => {
    const stuck = await client.enqueue(Rebuild, { n: 1 }, { concurrencyKey: 'crashy', priority: -10 });
    const next = await client.enqueue(Rebuild, { n: 2 }, { concurrencyKey: 'crashy', priority: -10 });
    // A "crashed" owner: claimed through the protocol, never heartbeated again.
    await registerWorkerRow(client.pool, client.namespace, 'crashed');
    const claimed = await protocol.claimMany(client.pool, client.namespace, {
      workerId: 'crashed',
      queues: ['default'],
      types: ['fx.rebuild'],
      limit: 10,
      leaseMs: 60_000,
    });
    expect(claimed.map((j) => j.id)).toEqual([stuck.id]);
    const w = new Worker(client, { workerId: 'after-crash', listen: false, heartbeatMs: 60_000 }).handle(Rebuild, () => 'ok');
    workers.push(w);
    expect(await w.runOnce()).toBe(false);

    await db.pool.query(`update workhorse.job_runtime set expires_at = now() - interval '1 second' where job_id = $1`, [stuck.id]);
    expect(await client.admin.recoverExpired()).toBe(1);
    expect((await db.pool.query('select * from workhorse.job_gates')).rows).toEqual([]);
    // Both jobs of the key now run, one per pass: the gate still admits one at a time.
    expect(await w.runOnce()).toBe(true);
    const statuses = async () => [(await client.getJob(stuck.id))!.status, (await client.getJob(next.id))!.status].sort();
    expect(await statuses()).toEqual(['ready', 'succeeded']);
    expect(await w.runOnce()).toBe(true);
    expect(await statuses()).toEqual(['succeeded', 'succeeded']);
    expect((await client.getJob(stuck.id))!.attempt).toBe(2);
  });
});

describe('queue policy', () => {
  it('never runs more jobs of a queue at once than its fleet-wide concurrency limit', async () => {
    await client.admin.setQueueLimits('limited', { concurrencyLimit: 2 });
    const overlap = new Overlap();
    startWorkers(3, { queue: 'limited' }, (w) =>
      w.handle(Limited, async () => {
        overlap.enter('limited');
        await sleep(25);
        overlap.leave('limited');
      }),
    );
    await client.enqueueMany(Array.from({ length: 12 }, (_, n) => ({ job: Limited, payload: { n } })));
    await waitFor(() => countJobs(db.pool, `queue = 'limited' and status = 'succeeded'`), (n) => n === 12, { what: '12 limited jobs' });
    expect(overlap.max.get('limited')).toBeLessThanOrEqual(2);
    expect(overlap.max.get('limited')).toBeGreaterThanOrEqual(1);
  });

  it('starts no more jobs of a queue than its rate limit allows per period', async () => {
    await client.admin.setQueueLimits('rated', { rateLimit: 3, ratePeriodMs: 3_600_000 });
    await client.enqueueMany(Array.from({ length: 7 }, (_, n) => ({ job: Rated, payload: { n } })));
    const ws = [0, 1].map((i) => new Worker(client, { workerId: `rated-${i}`, queue: 'rated', concurrency: 5, listen: false, heartbeatMs: 60_000 }));
    for (const w of ws) {
      w.handle(Rated, () => null);
      workers.push(w);
    }
    for (let round = 0; round < 3; round++) await Promise.all(ws.map((w) => w.runOnce()));
    expect(await countJobs(db.pool, `queue = 'rated' and status = 'succeeded'`)).toBe(3);
    expect(await countJobs(db.pool, `queue = 'rated' and status = 'ready'`)).toBe(4);

    // Clearing the limit lets the rest through; a null period (not a limit) leaves the period as it was.
    await client.admin.setQueueLimits('rated', { concurrencyLimit: null, rateLimit: null, ratePeriodMs: null });
    const rated = (await client.admin.listQueues()).find((q) => q.name === 'rated');
    expect([rated?.rateLimit, rated?.ratePeriodMs]).toEqual([null, 3_600_000]);
    await ws[0]!.runOnce();
    expect(await countJobs(db.pool, `queue = 'rated' and status = 'succeeded'`)).toBe(7);
  });
});

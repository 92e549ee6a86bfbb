// Durable waits (18): a child spawned with a dedupeKey another job holds.
// The enqueue inside the spawn returned that job, and linking it as the
// new parent's child broke a unique constraint: the handler got a raw
// PostgreSQL error (23505, no workhorse code) and the job was retried
// until its attempts ran out. The spawn is now refused with a
// ConflictError naming the holder, at once and without retries; a
// dedupeKey nobody holds spawns as before. The refusal no longer says the
// holder is not a child of the job: a sibling spawned under another name
// with the same key is one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Ship = defineJob({ type: 'dx.dedupe.ship', schema: z.object({ order: z.number() }) });
const Twins = defineJob({ type: 'dx.dedupe.twins', schema: z.object({}), retry: { maxAttempts: 1 } });
const Order = defineJob({
  type: 'dx.dedupe.order',
  schema: z.object({ order: z.number() }),
  retry: { maxAttempts: 5, backoff: { kind: 'fixed', baseMs: 10 } },
});

let db: TestDatabase;
let client: Client;
let worker: Worker;
let running: Promise<void>;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Order, Ship, Twins], poolMax: 4 });
  worker = new Worker(client, { workerId: 'spawn-dedupe', concurrency: 4, heartbeatMs: 200, pollMs: 200 });
  worker.handle(Order, async ({ order }, ctx) => {
    const ship = await ctx.spawn('ship', Ship, { order }, { dedupeKey: `shipment:${order}` });
    const [tracking] = await ctx.join('shipped', [ship]);
    return { tracking };
  });
  worker.handle(Ship, async ({ order }) => `track-${order}`);
  worker.handle(Twins, async (_p, ctx) => {
    await ctx.spawn('a', Ship, { order: 1 }, { dedupeKey: `twins:${ctx.job.id}` });
    await ctx.spawn('b', Ship, { order: 2 }, { dedupeKey: `twins:${ctx.job.id}` });
  });
  running = worker.run();
});

afterAll(async () => {
  await worker?.stop();
  await running;
  await client?.close();
  await db?.drop();
});

describe('a spawn whose dedupeKey another job holds', () => {
  it('spawns with a free key, and refuses a held one with a ConflictError on the first attempt', async () => {
    const first = await client.enqueue(Order, { order: 42 });
    const done = await waitFor(() => client.getJob(first.id), (j) => j!.status === 'succeeded', { what: 'the first order' });
    expect(done!.result).toEqual({ tracking: 'track-42' });
    const shipment = (await db.pool.query<{ id: string }>("select id::text from workhorse.jobs where dedupe_key = 'shipment:42'")).rows[0]!.id;

    const second = await client.enqueue(Order, { order: 42 });
    const failed = await waitFor(() => client.getJob(second.id), (j) => j!.status === 'failed', { what: 'the second order to fail' });
    expect(failed!.attempt).toBe(1);
    expect(failed!.lastError).toMatchObject({ name: 'ConflictError', code: 'conflict' });
    expect((failed!.lastError as { message: string }).message).toContain(`dedupeKey "shipment:42" is held by job ${shipment}`);
    // The first order's child is still its own.
    expect((await db.pool.query('select parent_id::text from workhorse.jobs where id = $1', [shipment])).rows[0].parent_id).toBe(first.id);
    expect((await db.pool.query('select count(*)::int as n from workhorse.job_children where parent_id = $1', [second.id])).rows[0].n).toBe(0);
  });

  it("refuses a second spawn of the same parent with its sibling's key, without calling the sibling another job's", async () => {
    const { id } = await client.enqueue(Twins, {});
    const failed = await waitFor(() => client.getJob(id), (j) => j!.status === 'failed', { what: 'the parent to fail' });
    const sibling = (await db.pool.query<{ id: string; parent_id: string }>('select id::text, parent_id::text from workhorse.jobs where dedupe_key = $1', [`twins:${id}`])).rows[0]!;
    expect(sibling.parent_id).toBe(id);
    const message = (failed!.lastError as { message: string }).message;
    expect(message).toContain(`dedupeKey "twins:${id}" is held by job ${sibling.id}`);
    expect(message).not.toContain('not a child');
  });
});

// A join of all of no children (a fan-out over a list that happened to be
// empty) returns no results at once, and the job goes on: it failed the job
// for good with a ValidationError ("children must be a non-empty array"),
// which the docs did not say. `any` of none, which can never succeed, is
// still refused as a mistake. A real PostgreSQL and a worker.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Item = defineJob({ type: 'jx.empty.item', schema: z.object({ n: z.number() }) });
const FanOut = defineJob({ type: 'jx.empty.fanout', schema: z.object({ items: z.array(z.number()), mode: z.enum(['all', 'any']) }), retry: { maxAttempts: 1 } });

let db: TestDatabase;
let client: Client;
let worker: Worker;
let running: Promise<void>;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [FanOut, Item], poolMax: 4 });
  worker = new Worker(client, { concurrency: 4, heartbeatMs: 200, pollMs: 100 });
  worker.handle(FanOut, async ({ items, mode }, ctx) => {
    const children = await Promise.all(items.map((n) => ctx.spawn(`item-${n}`, Item, { n })));
    const results = await ctx.join('items', children, { mode });
    await ctx.step('after', () => 'went on');
    return { results };
  });
  worker.handle(Item, async ({ n }) => n * 2);
  running = worker.run();
});
afterAll(async () => {
  await worker?.stop();
  await running;
  await client?.close();
  await db?.drop();
});

const ended = (id: string) => waitFor(() => client.getJob(id), (j) => ['succeeded', 'failed'].includes(j!.status), { what: `job ${id} to end` });

it('all of none: [] at once, the job goes on', async () => {
  const { id } = await client.enqueue(FanOut, { items: [], mode: 'all' });
  expect(await ended(id)).toMatchObject({ status: 'succeeded', result: { results: [] } });
});

it('all of some: their results, as before', async () => {
  const { id } = await client.enqueue(FanOut, { items: [1, 2], mode: 'all' });
  expect(await ended(id)).toMatchObject({ status: 'succeeded', result: { results: [2, 4] } });
});

it("any of none: refused, saying 'any' needs at least one", async () => {
  const { id } = await client.enqueue(FanOut, { items: [], mode: 'any' });
  const job = await ended(id);
  expect(job).toMatchObject({ status: 'failed', lastError: { name: 'ValidationError' } });
  expect((job!.lastError as { message: string }).message).toMatch(/join "items": children must be an array of spawned children or job ids \(mode 'any' needs at least one\)/);
});

// Durable waits (21): two spawns of one name at once. A name spawns one
// child (a later spawn of it returns that child), but two spawns of the
// name in flight together (a Promise.all) both enqueued a child; the
// second one's link was refused as a stale lease (WH409), so the handler
// failed with StaleLeaseError and the attempt was spent before the retry
// found the first child. The second spawn now waits for the first and
// returns its child, on the first attempt.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Label = defineJob({ type: 'dx.same.label', schema: z.object({ copy: z.number() }) });
const Order = defineJob({ type: 'dx.same.order', schema: z.object({}), retry: { maxAttempts: 3, backoff: { kind: 'fixed', baseMs: 10 } } });

let db: TestDatabase;
let client: Client;
let worker: Worker;
let running: Promise<void>;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Order, Label], poolMax: 4 });
  worker = new Worker(client, { workerId: 'spawn-same-name', concurrency: 4, heartbeatMs: 200, pollMs: 200 });
  worker.handle(Order, async (_p, ctx) => {
    const [a, b] = await Promise.all([ctx.spawn('label', Label, { copy: 1 }), ctx.spawn('label', Label, { copy: 2 })]);
    const results = await ctx.join('labelled', [a]);
    return { a: a.id, b: b.id, results };
  });
  worker.handle(Label, async ({ copy }) => `label ${copy}`);
  running = worker.run();
});

afterAll(async () => {
  await worker?.stop();
  await running;
  await client?.close();
  await db?.drop();
});

describe('two spawns of one name at once', () => {
  it('spawn one child, both return it, and the job succeeds on its first attempt', async () => {
    const { id } = await client.enqueue(Order, {});
    const done = await waitFor(() => client.getJob(id), (j) => j!.status === 'succeeded' || j!.status === 'failed', { what: 'the order to end' });
    expect(done).toMatchObject({ status: 'succeeded', attempt: 1 });
    const result = done!.result as { a: string; b: string; results: string[] };
    expect(result.b).toBe(result.a);
    expect(result.results).toEqual(['label 1']);
    const children = await db.pool.query("select count(*)::int as n from workhorse.jobs where type = 'dx.same.label'");
    expect(children.rows[0].n).toBe(1);
  });
});

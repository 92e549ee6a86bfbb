// Arguments plain JavaScript gets wrong, refused as durable.md says: a
// ValidationError that fails the job at once, naming what is wrong. A join
// given a BigInt or a circular object as a child failed with JSON.stringify's
// TypeError while building that message, so the job was retried until its
// attempts ran out; a spawn given options that are not an object (a number,
// a Date) spread them to nothing and created the child, where enqueue
// refuses them. A real PostgreSQL and a worker.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Child = defineJob({ type: 'pj.child', schema: z.object({}) });
const Parent = defineJob({
  type: 'pj.parent',
  schema: z.object({ call: z.enum(['join-bigint', 'join-cycle', 'spawn-number', 'spawn-date']) }),
  retry: { maxAttempts: 3, backoff: { kind: 'fixed', baseMs: 50, maxMs: 50 } },
});

let db: TestDatabase;
let client: Client;
let worker: Worker;
let running: Promise<void>;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Parent, Child], poolMax: 4 });
  worker = new Worker(client, { concurrency: 4, heartbeatMs: 500, pollMs: 100 });
  worker.events.on('error', () => undefined);
  worker.handle(Parent, async ({ call }, ctx) => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    if (call === 'join-bigint') return ctx.join('j', [42n as never]);
    if (call === 'join-cycle') return ctx.join('j', [cycle as never]);
    if (call === 'spawn-number') return ctx.spawn('c', Child, {}, 42 as never);
    return ctx.spawn('c', Child, {}, new Date() as never);
  });
  worker.handle(Child, async () => 'ok');
  running = worker.run();
});
afterAll(async () => {
  await worker?.stop();
  await running;
  await client?.close();
  await db?.drop();
});

const ended = (id: string) => waitFor(() => client.getJob(id), (j) => ['succeeded', 'failed'].includes(j!.status), { what: `job ${id} to end` });

it.each([
  ['join-bigint', /join "j": children\.0: 42n is not a spawned child/],
  ['join-cycle', /join "j": children\.0: \[object Object\] is not a spawned child/],
  ['spawn-number', /spawn "c": options must be an object/],
  ['spawn-date', /spawn "c": options must be an object/],
] as const)('%s: a ValidationError on the first attempt, no child created', async (call, message) => {
  const { id } = await client.enqueue(Parent, { call });
  const job = await ended(id);
  expect(job).toMatchObject({ status: 'failed', attempt: 1, lastError: { name: 'ValidationError' } });
  expect((job!.lastError as { message: string }).message).toMatch(message);
  const children = await db.pool.query("select count(*)::int n from workhorse.jobs where type = 'pj.child'");
  expect(children.rows[0].n).toBe(0);
});

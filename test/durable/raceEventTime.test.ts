// Durable waits: a race is won by the wait whose event came first, not by
// the database call that recorded it first. A checkout races a signal
// against a grace-period sleep. When the sleep fell due before the signal
// came, both waits were resolved by calls of the replay, and each was
// recorded resolved at its call's time: which won depended on which of the
// two concurrent calls committed first (an outside run saw a third of the
// jobs go each way), and a signal sent in the gap won though the sleep was
// due before it. A wait is now recorded resolved at its event's time: a
// sleep at its wake time, a signal when it was sent (or when its wait
// opened, for one kept from before).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const Checkout = defineJob({ type: 'dx.checkout.eventtime', schema: z.object({}) });
const GRACE_MS = 500;

let db: TestDatabase;
let client: Client;
let worker: Worker;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Checkout], poolMax: 4 });
  worker = new Worker(client, { workerId: 'race-event-time', concurrency: 4, heartbeatMs: 200, listen: false });
  worker.handle(Checkout, async (_p, ctx) => {
    const r = await Promise.race([ctx.waitForSignal<{ n: number }>('late'), ctx.sleep('grace', GRACE_MS).then(() => 'slept' as const)]);
    return r === 'slept' ? 'slept' : { signal: r };
  });
});
afterAll(async () => {
  await worker?.stop();
  await client?.close();
  await db?.drop();
});

const sleepMs = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waits(id: string): Promise<Record<string, { outcome: string; at_wake: boolean }>> {
  const { rows } = await db.pool.query<{ name: string; outcome: string; at_wake: boolean }>(
    'select name, outcome, resolved_at = wake_at as at_wake from workhorse.job_waits where job_id = $1',
    [id],
  );
  return Object.fromEntries(rows.map((r) => [r.name, { outcome: r.outcome, at_wake: r.at_wake }]));
}

it('returns the sleep when it fell due before the signal came, though the signal reached the waiting job first', async () => {
  const { id } = await client.enqueue(Checkout, {});
  expect(await worker.runOnce()).toBe(true);
  expect((await client.getJob(id))?.status).toBe('waiting');
  await sleepMs(GRACE_MS + 300);
  // The job still waits (no worker has claimed it since the sleep fell due): the signal is delivered.
  expect(await client.signal(id, 'late', { n: 1 })).toEqual({ outcome: 'delivered', jobId: id });
  while ((await client.getJob(id))?.status !== 'succeeded') await worker.runOnce();
  expect((await client.getJob(id))?.result).toBe('slept');
  expect((await waits(id)).grace).toEqual({ outcome: 'done', at_wake: true });
});

it('returns the signal when it came before the sleep fell due', async () => {
  const { id } = await client.enqueue(Checkout, {});
  expect(await worker.runOnce()).toBe(true);
  expect(await client.signal(id, 'late', { n: 2 })).toEqual({ outcome: 'delivered', jobId: id });
  await sleepMs(GRACE_MS + 300);
  while ((await client.getJob(id))?.status !== 'succeeded') await worker.runOnce();
  expect((await client.getJob(id))?.result).toEqual({ signal: { n: 2 } });
});

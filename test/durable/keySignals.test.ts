// Durable waits (5): signals by key and jobs that ended with a wait on the
// key still open. A job cancelled while it waits on a key, or one that won
// a race of its key wait against a sleep, leaves that wait unresolved. The
// next signal to the key goes to a job still waiting on it, not to the
// ended one, where it would be kept for no wait and make the key refuse the
// signals after it. Signals sent to a key at the same moment each go to a
// job still waiting on it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Paid = defineJob({ type: 'dx.paid', schema: z.object({ key: z.string(), graceMs: z.number().optional() }) });

let db: TestDatabase;
let client: Client;
let worker: Worker;
let running: Promise<void>;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Paid], poolMax: 4 });
  worker = new Worker(client, { workerId: 'key-signals', concurrency: 4, heartbeatMs: 200, pollMs: 5000 });
  worker.handle(Paid, async (p, ctx) => {
    const paid = ctx.waitForSignal('paid', { key: p.key }).then((v) => ({ paid: v }));
    if (p.graceMs === undefined) return paid;
    return Promise.race([paid, ctx.sleep('grace', p.graceMs).then(() => ({ expired: true }))]);
  });
  running = worker.run();
});

afterAll(async () => {
  await worker?.stop();
  await running;
  await client?.close();
  await db?.drop();
});

const waiting = (id: string) => waitFor(() => client.getJob(id), (j) => j!.status === 'waiting', { what: `job ${id} to wait` });
const succeeded = (id: string) => waitFor(() => client.getJob(id), (j) => j!.status === 'succeeded', { what: `job ${id} to finish` });

describe('a signal by key', () => {
  it('skips a job cancelled while it waited on the key', async () => {
    const { id: cancelled } = await client.enqueue(Paid, { key: 'order:1' });
    await waiting(cancelled);
    await client.cancel(cancelled);
    const { id: live } = await client.enqueue(Paid, { key: 'order:1' });
    await waiting(live);
    expect(await client.signalKey('order:1', 'paid', 10)).toEqual({ outcome: 'delivered', jobId: live });
    expect((await succeeded(live))!.result).toEqual({ paid: 10 });
    // The key took the signal: it takes the next one (kept for the next wait).
    expect(await client.signalKey('order:1', 'paid', 11)).toEqual({ outcome: 'kept', jobId: null });
  });

  it('skips a job that went on past its key wait by another wait it raced', async () => {
    const { id: expired } = await client.enqueue(Paid, { key: 'order:2', graceMs: 100 });
    expect((await succeeded(expired))!.result).toEqual({ expired: true });
    const { id: live } = await client.enqueue(Paid, { key: 'order:2' });
    await waiting(live);
    expect(await client.signalKey('order:2', 'paid', 20)).toEqual({ outcome: 'delivered', jobId: live });
    expect((await succeeded(live))!.result).toEqual({ paid: 20 });
  });

  it('gives signals sent at the same moment one waiting job each (the second was kept for the job the first had taken, and the key refused the rest)', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { id } = await client.enqueue(Paid, { key: 'order:3' });
      await waiting(id);
      ids.push(id);
    }
    const sent = await Promise.all([1, 2, 3].map((n) => client.signalKey('order:3', 'paid', n)));
    expect(sent.map((s) => s.outcome)).toEqual(['delivered', 'delivered', 'delivered']);
    expect(new Set(sent.map((s) => s.jobId))).toEqual(new Set(ids));
    const results = await Promise.all(ids.map(async (id) => ((await succeeded(id))!.result as { paid: number }).paid));
    expect(results.sort()).toEqual([1, 2, 3]);
    // Nothing is left kept on the key: the next signal is kept for the next wait, not refused.
    expect(await client.signalKey('order:3', 'paid', 4)).toEqual({ outcome: 'kept', jobId: null });
  });
});

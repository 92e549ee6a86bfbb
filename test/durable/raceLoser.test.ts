// Durable waits (16): the loser of a race does not hold the job. A checkout
// races the payment signal against a grace-period sleep; when the sleep
// wins, the handler goes on (a step, a person's decision, or plain code
// before it returns). The signal wait that lost stays open, but its
// suspension must not become the run's outcome: the job used to suspend on
// the lost signal wait after the handler had moved on, discarding what it
// did next and waiting forever (no timeout) instead of reaching the
// decision or finishing. A Promise.all of the same two waits still
// suspends on the open one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Checkout = defineJob({ type: 'dx.checkout.race', schema: z.object({ graceMs: z.number(), then: z.enum(['decide', 'plain']) }) });
const Both = defineJob({ type: 'dx.checkout.all', schema: z.object({}) });

let db: TestDatabase;
let client: Client;
let worker: Worker;
let running: Promise<void>;
const released = new Map<string, number>();

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Checkout, Both], poolMax: 4 });
  worker = new Worker(client, { workerId: 'race-loser', concurrency: 4, heartbeatMs: 200, pollMs: 500 });
  worker.handle(Checkout, async (p, ctx) => {
    const r = await Promise.race([
      ctx.waitForSignal('paid').then((v) => ({ paid: v })),
      ctx.sleep('grace', p.graceMs).then(() => ({ expired: true })),
    ]);
    if (p.then === 'plain') {
      // Plain work (an HTTP call, say) before it returns.
      await new Promise((resolve) => setTimeout(resolve, 100));
      return r;
    }
    await ctx.step('release-stock', () => released.set(ctx.job.id, (released.get(ctx.job.id) ?? 0) + 1).size);
    const d = await ctx.waitForDecision('review', { choices: ['close', 'retry'] });
    return { ...r, review: d.choice };
  });
  worker.handle(Both, async (_p, ctx) => Promise.all([ctx.sleep('short', 0), ctx.waitForSignal('paid')]));
  running = worker.run();
});

afterAll(async () => {
  await worker?.stop();
  await running;
  await client?.close();
  await db?.drop();
});

describe('a race whose sleep wins', () => {
  it('goes on to the step and the decision after it, and finishes once decided', async () => {
    const { id } = await client.enqueue(Checkout, { graceMs: 300, then: 'decide' });
    const waiting = await waitFor(() => client.getJob(id), (j) => j!.status === 'waiting' && j!.wait?.name === 'review', {
      what: 'the checkout to wait for its review',
      timeoutMs: 10_000,
    });
    expect(waiting!.wait).toMatchObject({ kind: 'decision', choices: ['close', 'retry'] });
    expect(released.get(id)).toBe(1);
    await client.decide(id, 'review', { choice: 'close', by: 'ops' });
    const done = await waitFor(() => client.getJob(id), (j) => j!.status === 'succeeded', { what: 'the checkout to finish' });
    expect(done!.result).toEqual({ expired: true, review: 'close' });
    expect(released.get(id)).toBe(1);
  });

  it('finishes when the handler returns after plain work, on the first run (grace already over) too', async () => {
    const later = await client.enqueue(Checkout, { graceMs: 200, then: 'plain' });
    const atOnce = await client.enqueue(Checkout, { graceMs: 0, then: 'plain' });
    for (const { id } of [later, atOnce]) {
      const done = await waitFor(() => client.getJob(id), (j) => j!.status === 'succeeded', { what: `checkout ${id} to finish`, timeoutMs: 10_000 });
      expect(done!.result).toEqual({ expired: true });
    }
  });

  it('a Promise.all of a due sleep and a signal still suspends on the signal, and finishes with it', async () => {
    const { id } = await client.enqueue(Both, {});
    const waiting = await waitFor(() => client.getJob(id), (j) => j!.status === 'waiting', { what: 'the job to wait' });
    expect(waiting!.wait).toMatchObject({ name: 'paid', kind: 'signal' });
    expect(await client.signal(id, 'paid', 'P')).toEqual({ outcome: 'delivered', jobId: id });
    const done = await waitFor(() => client.getJob(id), (j) => j!.status === 'succeeded', { what: 'the job to finish' });
    expect(done!.result).toEqual([null, 'P']);
  });
});

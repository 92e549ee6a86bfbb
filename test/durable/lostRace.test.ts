// Durable waits (17): a race's loser is closed. A checkout races the
// payment signal against a grace-period sleep, takes the branch of the
// winner (a step), then waits for a person's review. What reaches the
// losing wait afterwards used to resolve it: a late payment signal was
// "delivered", woke the job, and the replay of the race returned the late
// payment instead of the expired grace period, so the handler took the
// other branch (shipping an order it had already released). A losing sleep
// kept waking the job, which waited for a decision without a timeout, at
// the sleep's wake time. Now the loser is closed once the handler goes on:
// a signal to it is refused, a decision for it too (and it is no longer
// listed), its time wakes nothing, and every replay ends the race as it
// ended. A handler whose code no longer opens the winner beside a lost
// wait fails with WaitLostError instead of waiting forever.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { ConflictError } from '../../src/errors.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Checkout = defineJob({ type: 'dx.checkout.lost', schema: z.object({ graceMs: z.number(), raceDecision: z.boolean().optional() }) });
const Three = defineJob({ type: 'dx.checkout.three', schema: z.object({}) });
const Redeployed = defineJob({ type: 'dx.checkout.redeployed', schema: z.object({ v: z.number() }), retry: { maxAttempts: 3 } });

let db: TestDatabase;
let client: Client;
let worker: Worker;
let running: Promise<void>;
const branches = new Map<string, string[]>();
/** The code version the Redeployed handler runs (a deploy between two runs). */
let version = 1;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Checkout, Three, Redeployed], poolMax: 4 });
  worker = new Worker(client, { workerId: 'lost-race', concurrency: 4, heartbeatMs: 200, pollMs: 500 });
  worker.handle(Checkout, async (p, ctx) => {
    const payment = p.raceDecision
      ? ctx.waitForDecision('manual-pay', { choices: ['paid'] }).then((d) => ({ paid: d.choice }))
      : ctx.waitForSignal('paid').then((v) => ({ paid: v }));
    const r = await Promise.race([payment, ctx.sleep('grace', p.graceMs).then(() => ({ expired: true }))]);
    const branch = 'expired' in r ? 'release-stock' : 'ship';
    await ctx.step(branch, () => {
      branches.set(ctx.job.id, [...(branches.get(ctx.job.id) ?? []), branch]);
      return true;
    });
    const d = await ctx.waitForDecision('review', { choices: ['close', 'escalate'] });
    return { ...r, review: d.choice };
  });
  // Not a race: every wait of a Promise.all is needed, none is closed.
  worker.handle(Three, async (_p, ctx) => Promise.all([ctx.sleep('short', 0), ctx.waitForSignal('a'), ctx.waitForSignal('b')]));
  worker.handle(Redeployed, async (_p, ctx) => {
    if (version === 1) {
      await Promise.race([ctx.waitForSignal('paid'), ctx.sleep('grace', 0)]);
      await ctx.waitForSignal('next');
      return 'v1';
    }
    // The new code waits for the payment alone.
    await ctx.waitForSignal('paid');
    return 'v2';
  });
  running = worker.run();
});

afterAll(async () => {
  await worker?.stop();
  await running;
  await client?.close();
  await db?.drop();
});

async function waitingForReview(id: string) {
  return waitFor(() => client.getJob(id), (j) => j!.status === 'waiting' && j!.wait?.name === 'review', {
    what: `checkout ${id} to wait for its review`,
    timeoutMs: 10_000,
  });
}

describe('a race whose sleep won', () => {
  it('refuses a late signal to the losing wait, and the job finishes on the branch it took', async () => {
    const { id } = await client.enqueue(Checkout, { graceMs: 200 });
    await waitingForReview(id);
    const late = client.signal(id, 'paid', { late: true });
    await expect(late).rejects.toBeInstanceOf(ConflictError);
    await expect(late).rejects.toThrow(/lost a race/);
    // Nothing woke it: it still waits for the review.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await client.getJob(id)).toMatchObject({ status: 'waiting', wait: { name: 'review' } });
    await client.decide(id, 'review', { choice: 'close', by: 'ops' });
    const done = await waitFor(() => client.getJob(id), (j) => j!.status === 'succeeded', { what: 'the checkout to finish' });
    expect(done!.result).toEqual({ expired: true, review: 'close' });
    expect(branches.get(id)).toEqual(['release-stock']);
    const waits = await db.pool.query('select name, outcome from workhorse.job_waits where job_id = $1 order by name', [id]);
    expect(waits.rows).toEqual([
      { name: 'grace', outcome: 'done' },
      { name: 'paid', outcome: 'lost' },
      { name: 'review', outcome: 'done' },
    ]);
  });

  it('refuses a decision for a losing decision wait and no longer lists it', async () => {
    const { id } = await client.enqueue(Checkout, { graceMs: 200, raceDecision: true });
    await waitingForReview(id);
    const pending = await client.pendingDecisions({ type: Checkout.type });
    expect(pending.filter((d) => d.jobId === id).map((d) => d.name)).toEqual(['review']);
    const late = client.decide(id, 'manual-pay', { choice: 'paid', by: 'ops' });
    await expect(late).rejects.toBeInstanceOf(ConflictError);
    await expect(late).rejects.toThrow(/lost a race/);
    await client.decide(id, 'review', { choice: 'escalate', by: 'ops' });
    const done = await waitFor(() => client.getJob(id), (j) => j!.status === 'succeeded', { what: 'the checkout to finish' });
    expect(done!.result).toEqual({ expired: true, review: 'escalate' });
    expect(branches.get(id)).toEqual(['release-stock']);
  });
});

describe('a race whose signal won', () => {
  it('is not woken by the losing sleep while it waits for a decision without a timeout', async () => {
    const { id } = await client.enqueue(Checkout, { graceMs: 1_000 }, { delayMs: 200 });
    expect(await client.signal(id, 'paid', 'on time')).toEqual({ outcome: 'kept', jobId: id });
    const waiting = await waitingForReview(id);
    expect(waiting!.runAt.getUTCFullYear()).toBe(9999);
    const execution = waiting!.execution;
    // Past the losing sleep's wake time: the job was not run again.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await client.getJob(id)).toMatchObject({ status: 'waiting', execution, wait: { name: 'review' } });
    await client.decide(id, 'review', { choice: 'close', by: 'ops' });
    const done = await waitFor(() => client.getJob(id), (j) => j!.status === 'succeeded', { what: 'the checkout to finish' });
    expect(done!.result).toEqual({ paid: 'on time', review: 'close' });
    expect(branches.get(id)).toEqual(['ship']);
  });
});

describe('a Promise.all of a due sleep and two signals', () => {
  it('waits for both signals, whichever comes first, and finishes with them', async () => {
    const { id } = await client.enqueue(Three, {});
    await waitFor(() => client.getJob(id), (j) => j!.status === 'waiting', { what: 'the job to wait' });
    expect(await client.signal(id, 'b', 'B')).toEqual({ outcome: 'delivered', jobId: id });
    await waitFor(() => client.getJob(id), (j) => j!.status === 'waiting' && j!.execution > 1, { what: 'the job to wait again' });
    expect(await client.signal(id, 'a', 'A')).toEqual({ outcome: 'delivered', jobId: id });
    const done = await waitFor(() => client.getJob(id), (j) => j!.status !== 'waiting' && j!.status !== 'ready' && j!.status !== 'running', { what: 'the job to end' });
    expect(done).toMatchObject({ status: 'succeeded', result: [null, 'A', 'B'] });
  });
});

describe('a deploy that drops the race', () => {
  it('fails the job with WaitLostError, without retries, instead of waiting on the lost wait forever', async () => {
    const { id } = await client.enqueue(Redeployed, { v: 1 });
    await waitFor(() => client.getJob(id), (j) => j!.status === 'waiting' && j!.wait?.name === 'next', { what: 'the job to wait for next' });
    version = 2;
    await client.signal(id, 'next', null);
    const failed = await waitFor(() => client.getJob(id), (j) => j!.status === 'failed', { what: 'the job to fail' });
    expect(failed!.lastError).toMatchObject({ name: 'WaitLostError', code: 'wait_lost' });
    expect(failed!.attempt).toBe(1);
  });
});

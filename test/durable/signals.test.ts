// Durable waits (2): signals. A signal sent before the wait opens is kept
// and consumed when it does; one sent while the job waits wakes it; a wait
// with a timeout that passes throws SignalTimeoutError; a payload that
// fails the wait's schema fails the job for good; a signal addressed by
// key reaches the job that chose the key; a second signal of a name the job
// already took is refused and changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { ConflictError, NotFoundError, SignalTimeoutError } from '../../src/errors.js';
import { isSuspension } from '../../src/worker/suspension.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Paid = z.object({ amount: z.number() });
const Order = defineJob({ type: 'dx.order', schema: z.object({ order: z.number(), key: z.string().optional(), timeoutMs: z.number().optional() }) });

let db: TestDatabase;
let client: Client;
let worker: Worker;
let running: Promise<void>;
/** How many times the handler body before the wait ran, per job. */
const before = new Map<string, number>();
const timedOut = new Set<string>();

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Order], poolMax: 8 });
  worker = new Worker(client, { workerId: 'signals', concurrency: 4, heartbeatMs: 200, pollMs: 5000 });
  worker.handle(Order, async (p, ctx) => {
    const charged = await ctx.step('charge', () => {
      before.set(ctx.job.id, (before.get(ctx.job.id) ?? 0) + 1);
      return { at: Date.now() };
    });
    try {
      const paid = await ctx.waitForSignal('paid', { schema: Paid, key: p.key, timeoutMs: p.timeoutMs });
      return { paid: paid.amount, charged: charged.at > 0, attempt: ctx.job.attempt };
    } catch (err) {
      if (isSuspension(err)) throw err;
      if (err instanceof SignalTimeoutError) {
        timedOut.add(ctx.job.id);
        return { timedOut: true };
      }
      throw err;
    }
  });
  running = worker.run();
});

afterAll(async () => {
  await worker?.stop();
  await running;
  await client?.close();
  await db?.drop();
});

async function statusOf(id: string): Promise<string> {
  return (await client.getJob(id))!.status;
}

describe('signals', () => {
  it('keeps a signal sent before the wait opens and hands it to the wait', async () => {
    // Enqueued delayed, so the signal surely arrives first.
    const { id } = await client.enqueue(Order, { order: 1 }, { delayMs: 300 });
    expect(await client.signal(id, 'paid', { amount: 10 })).toEqual({ outcome: 'kept', jobId: id });
    const done = await waitFor(() => client.getJob(id), (j) => j!.status === 'succeeded', { what: 'order 1 to finish' });
    expect(done!.result).toEqual({ paid: 10, charged: true, attempt: 1 });
    expect(before.get(id)).toBe(1);
    // The job never waited: the signal was there.
    const waits = await db.pool.query('select kind, outcome, value from workhorse.job_waits where job_id = $1', [id]);
    expect(waits.rows).toEqual([{ kind: 'signal', outcome: 'done', value: { amount: 10 } }]);
  });

  it('wakes a waiting job when the signal arrives; the step before the wait does not run again; the attempt is not counted', async () => {
    const { id } = await client.enqueue(Order, { order: 2 });
    const waiting = await waitFor(() => client.getJob(id), (j) => j!.status === 'waiting', { what: 'order 2 to wait' });
    expect(waiting!.wait).toMatchObject({ name: 'paid', kind: 'signal', wakeAt: null });
    expect(waiting!.wait!.since).toBeInstanceOf(Date);
    // No lease is held while it waits.
    expect((await db.pool.query('select count(*)::int as n from workhorse.job_runtime where job_id = $1', [id])).rows[0].n).toBe(0);
    expect(await client.signal(id, 'paid', { amount: 20 })).toEqual({ outcome: 'delivered', jobId: id });
    const done = await waitFor(() => client.getJob(id), (j) => j!.status === 'succeeded', { what: 'order 2 to finish' });
    expect(done!.result).toEqual({ paid: 20, charged: true, attempt: 1 });
    expect(done!.attempt).toBe(1);
    expect(before.get(id)).toBe(1);
    // A second signal of the same name is refused and changes nothing.
    await expect(client.signal(id, 'paid', { amount: 30 })).rejects.toBeInstanceOf(ConflictError);
  });

  it('refuses a second signal of the same name while the first is still kept', async () => {
    const { id } = await client.enqueue(Order, { order: 3 }, { delayMs: 60_000 });
    await client.signal(id, 'paid', { amount: 1 });
    await expect(client.signal(id, 'paid', { amount: 2 })).rejects.toBeInstanceOf(ConflictError);
    const kept = await db.pool.query('select payload from workhorse.job_signals where job_id = $1', [id]);
    expect(kept.rows).toEqual([{ payload: { amount: 1 } }]);
    await expect(client.signal('999999999', 'paid', {})).rejects.toBeInstanceOf(NotFoundError);
    await client.cancel(id);
  });

  it('times out: the wait throws SignalTimeoutError after its timeout, and a late signal is refused', async () => {
    const { id } = await client.enqueue(Order, { order: 4, timeoutMs: 400 });
    await waitFor(() => statusOf(id), (s) => s === 'waiting', { what: 'order 4 to wait' });
    const done = await waitFor(() => client.getJob(id), (j) => j!.status === 'succeeded', { what: 'order 4 to time out' });
    expect(done!.result).toEqual({ timedOut: true });
    expect(timedOut.has(id)).toBe(true);
    const w = await db.pool.query('select outcome, resolved_at - started_at >= interval \'400 ms\' as late from workhorse.job_waits where job_id = $1', [id]);
    expect(w.rows).toEqual([{ outcome: 'timeout', late: true }]);
    await expect(client.signal(id, 'paid', { amount: 5 })).rejects.toBeInstanceOf(ConflictError);
  });

  it('fails the job for good when the payload does not match the schema', async () => {
    const { id } = await client.enqueue(Order, { order: 5 });
    await waitFor(() => statusOf(id), (s) => s === 'waiting', { what: 'order 5 to wait' });
    await client.signal(id, 'paid', { amount: 'lots' });
    const done = await waitFor(() => client.getJob(id), (j) => j!.status === 'failed', { what: 'order 5 to fail' });
    expect(done!.attempt).toBe(1);
    expect(done!.lastError).toMatchObject({ name: 'ValidationError' });
    // The stored error keeps only its message, so the message names the field and what was wrong.
    expect((done!.lastError as { message: string }).message).toMatch(/does not match its schema: amount: .*number/i);
  });

  it('delivers by key, to a job waiting on it and to one whose wait opens later', async () => {
    const a = await client.enqueue(Order, { order: 6, key: 'order:6' });
    await waitFor(() => statusOf(a.id), (s) => s === 'waiting', { what: 'order 6 to wait' });
    expect(await client.signalKey('order:6', 'paid', { amount: 60 })).toEqual({ outcome: 'delivered', jobId: a.id });
    expect((await waitFor(() => client.getJob(a.id), (j) => j!.status === 'succeeded'))!.result).toMatchObject({ paid: 60 });

    expect(await client.signalKey('order:7', 'paid', { amount: 70 })).toEqual({ outcome: 'kept', jobId: null });
    await expect(client.signalKey('order:7', 'paid', { amount: 71 })).rejects.toBeInstanceOf(ConflictError);
    const b = await client.enqueue(Order, { order: 7, key: 'order:7' });
    expect((await waitFor(() => client.getJob(b.id), (j) => j!.status === 'succeeded'))!.result).toMatchObject({ paid: 70 });
    const consumed = await db.pool.query('select consumed_by::text as by from workhorse.job_signals where key = $1', ['order:7']);
    expect(consumed.rows).toEqual([{ by: b.id }]);
  });
});

// Durable waits (5): the fence. An owner whose lease was recovered and
// whose job another worker claimed can neither open a wait nor suspend the
// job: both are refused with StaleLeaseError and change nothing (the job
// stays running under the new owner, no wait row appears, the lease is the
// new owner's). The new owner suspends the same job normally.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import * as protocol from '../../src/db/protocol.js';
import { StaleLeaseError } from '../../src/errors.js';
import type { HandlerContext } from '../../src/worker/context.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, registerWorkerRow, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';
import { latch } from '../foundation/support/latch.js';
import { jobRow } from '../foundation/support/rows.js';

const Nap = defineJob({ type: 'dx.nap', schema: z.object({}) });

let db: TestDatabase;
let client: Client;
const workers: Worker[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, poolMax: 8, jobs: [Nap] });
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop({ hard: true })));
  await db.pool.query('truncate workhorse.jobs, workhorse.job_runtime, workhorse.job_waits');
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

async function loseLease(jobId: string): Promise<void> {
  await db.pool.query(`update workhorse.job_runtime set expires_at = now() - interval '1 second' where job_id = $1`, [jobId]);
  expect(await client.admin.recoverExpired()).toBe(1);
}

async function lease(jobId: string) {
  return (await db.pool.query('select worker_id, execution::text as execution from workhorse.job_runtime where job_id = $1', [jobId])).rows;
}

describe('the fence on waits', () => {
  it('a stale owner reaching ctx.sleep is refused; nothing changes', async () => {
    const a = new Worker(client, { workerId: 'owner-a', heartbeatMs: 60_000, listen: false, concurrency: 1 });
    const b = new Worker(client, { workerId: 'owner-b', heartbeatMs: 60_000, listen: false, concurrency: 1 });
    workers.push(a, b);
    const release = latch();
    let ctxA!: HandlerContext;
    const slept: unknown[] = [];
    a.handle(Nap, async (_p, ctx) => {
      ctxA = ctx;
      await release.promise;
      try {
        await ctx.sleep('nap', 60_000);
      } catch (err) {
        slept.push(err);
        throw err;
      }
    });
    const hold = latch();
    b.handle(Nap, async () => {
      await hold.promise;
      return 'b';
    });
    const { id } = await client.enqueue(Nap, {});
    const runA = a.runOnce();
    await waitFor(() => ctxA, (c) => c !== undefined, { what: 'owner a to start' });
    await loseLease(id);
    const runB = b.runOnce();
    await waitFor(() => lease(id), (l) => l.length === 1 && l[0].worker_id === 'owner-b', { what: 'owner b to claim' });
    const before = await jobRow(db.pool, id);
    const leaseB = await lease(id);

    release.open();
    await waitFor(() => slept.length, (n) => n === 1, { what: 'owner a to reach the sleep' });
    expect(slept[0]).toBeInstanceOf(StaleLeaseError);
    expect(await jobRow(db.pool, id)).toEqual(before);
    expect(before.status).toBe('running');
    expect(await lease(id)).toEqual(leaseB);
    expect((await db.pool.query('select count(*)::int as n from workhorse.job_waits')).rows[0].n).toBe(0);
    hold.open();
    await Promise.all([runA, runB]);
    expect(await jobRow(db.pool, id)).toMatchObject({ status: 'succeeded', result: 'b' });
  });

  it('a stale owner whose wait was open cannot suspend the job; the new owner can', async () => {
    await registerWorkerRow(db.pool, 'default', 'p-a', ['dx.nap']);
    await registerWorkerRow(db.pool, 'default', 'p-b', ['dx.nap']);
    const { id } = await client.enqueue(Nap, {});
    const claim = (workerId: string) =>
      protocol.claimMany(db.pool, 'default', { workerId, queues: ['default'], types: ['dx.nap'], limit: 1, leaseMs: 60_000, maxTimeoutMs: null, start: 1 });
    const [jobA] = await claim('p-a');
    const leaseA = { id, execution: jobA!.execution };
    // Owner a opened its wait while it still held the lease.
    expect(await protocol.beginWait(db.pool, 'default', leaseA, 'nap', { kind: 'sleep', wakeInMs: 60_000 })).toMatchObject({ resolved: false });
    await loseLease(id);
    const [jobB] = await claim('p-b');
    expect(jobB!.execution).toBeGreaterThan(jobA!.execution);
    const before = await jobRow(db.pool, id);

    await expect(protocol.suspend(db.pool, 'default', leaseA, 'nap')).rejects.toBeInstanceOf(StaleLeaseError);
    await expect(protocol.beginWait(db.pool, 'default', leaseA, 'other', { kind: 'sleep', wakeInMs: 1 })).rejects.toBeInstanceOf(StaleLeaseError);
    expect(await jobRow(db.pool, id)).toEqual(before);
    expect(await lease(id)).toEqual([{ worker_id: 'p-b', execution: String(jobB!.execution) }]);
    expect((await db.pool.query('select name from workhorse.job_waits where job_id = $1', [id])).rows).toEqual([{ name: 'nap' }]);

    // The new owner replays to the same wait and suspends: waiting, no lease, attempt unchanged.
    const leaseB = { id, execution: jobB!.execution };
    expect(await protocol.beginWait(db.pool, 'default', leaseB, 'nap', { kind: 'sleep', wakeInMs: 60_000 })).toMatchObject({ resolved: false });
    expect(await protocol.suspend(db.pool, 'default', leaseB, 'nap')).toMatchObject({ status: 'waiting' });
    const after = await jobRow(db.pool, id);
    // The row keeps the recovered attempt (1 finished), so a waiting job reads as the attempt
    // it is on, 2, as b's run was; the resumed claim is attempt 2 again.
    expect(before.attempt).toBe(2);
    expect(after).toMatchObject({ status: 'waiting', attempt: 2, execution: jobB!.execution });
    expect((await db.pool.query('select attempt from workhorse.jobs where id = $1', [id])).rows[0].attempt).toBe(1);
    expect(await lease(id)).toEqual([]);
    // A second suspension by either owner is refused.
    await expect(protocol.suspend(db.pool, 'default', leaseB, 'nap')).rejects.toBeInstanceOf(StaleLeaseError);
  });
});

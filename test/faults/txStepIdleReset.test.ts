// A transactional step or a spawn whose pooled connection the server ended
// while it sat idle (a failover, a pg_terminate_backend, a load balancer's
// reset) breaks at its opening statement: nothing of it ran, so it is run
// again on a new connection while the job holds its lease, and no attempt
// is counted. It failed the attempt ("the database connection broke ...
// the job will retry"), and a job of maxAttempts 1 failed for good; CI met
// it when a test ended a read-only database's sessions. Through a TCP proxy
// in front of the test server that resets every connection it carries just
// before the step begins. And a step whose connection breaks while its
// body runs (its writes roll back) runs again on a new connection too, in
// the same attempt: a terminated backend or a reset cost an attempt each,
// and a job of few attempts failed for good under a storm of them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { TcpProxy } from '../../certify/tcpProxy.js';
import { createClient, defineJob, Worker } from '../../src/index.js';
import type { TestDatabase } from '../helpers/db.js';
import { createProxiedDatabase, type ProxiedDatabase } from '../helpers/proxiedDatabase.js';
import { waitFor } from '../helpers/wait.js';

const Stepper = defineJob({ type: 'reset.txstep', queue: 'reset', schema: z.object({ n: z.number() }), retry: { maxAttempts: 1 } });
const Child = defineJob({ type: 'reset.child', queue: 'reset', schema: z.object({}) });
const MidBody = defineJob({ type: 'reset.midbody', queue: 'midbody', schema: z.object({ n: z.number() }), retry: { maxAttempts: 1 } });

let db: TestDatabase;
let proxy: TcpProxy;
let url: string;
let proxied: ProxiedDatabase;
beforeAll(async () => {
  proxied = await createProxiedDatabase();
  ({ db, proxy, url } = proxied);
  await db.pool.query('create table reset_effects (job_id bigint, n int)');
});
afterAll(async () => {
  await proxied?.close();
});

describe('a transactional step or a spawn on a pooled connection reset while idle', () => {
  it('runs again on a new connection: the job succeeds on its one attempt, its effect and its child once', async () => {
    const client = createClient({ connectionString: url, jobs: [Stepper, Child], poolMax: 4 });
    const worker = new Worker(client, { queue: 'reset', concurrency: 1, heartbeatMs: 3_000, listen: false, pollMs: 100 });
    worker.events.on('error', () => undefined);
    const resets: number[] = [];
    worker.handle(Stepper, async ({ n }, ctx) => {
      // At once before each: the pool still holds idle connections whose sockets were just reset.
      resets.push(proxy.dropAll());
      await ctx.txStep('write', async (tx) => {
        await tx.query('insert into reset_effects (job_id, n) values ($1, $2)', [ctx.job.id, n]);
      });
      resets.push(proxy.dropAll());
      await ctx.spawn('kid', Child, {});
      return { n };
    });
    worker.handle(Child, async () => 'ok');
    const running = worker.run();
    try {
      const jobs = await client.enqueueMany([1, 2, 3].map((n) => ({ job: Stepper, payload: { n } })));
      const ids = jobs.map((j) => j.id);
      const rows = await waitFor(
        async () =>
          (
            await db.pool.query<{ status: string; attempt: number; last_error: unknown }>(
              'select status, attempt, last_error from workhorse.jobs where id = any($1::bigint[]) order by id',
              [ids],
            )
          ).rows,
        (r) => r.every((x) => x.status !== 'ready' && x.status !== 'running'),
        { what: 'the three jobs to end', timeoutMs: 30_000 },
      );
      expect(resets.every((n) => n > 0), `connections reset before each step: ${resets.join(',')}`).toBe(true);
      expect(rows.map(({ status, attempt }) => ({ status, attempt })), JSON.stringify(rows.map((r) => r.last_error))).toEqual(
        [1, 2, 3].map(() => ({ status: 'succeeded', attempt: 1 })),
      );
      const effects = await db.pool.query<{ n: number }>('select n from reset_effects order by n');
      expect(effects.rows.map((r) => r.n)).toEqual([1, 2, 3]);
      // The parents do not wait for their children: each spawned once, each run to its end.
      const children = await waitFor(
        async () => (await db.pool.query<{ status: string }>("select status from workhorse.jobs where type = 'reset.child'")).rows.map((r) => r.status),
        (r) => r.length === 3 && r.every((x) => x === 'succeeded'),
        { what: 'the three children to succeed', timeoutMs: 20_000 },
      );
      expect(children).toHaveLength(3);
    } finally {
      await worker.stop();
      await running;
      await client.close();
    }
  }, 60_000);
});

describe('a transactional step whose connection is reset while its body runs', () => {
  it('runs again on a new connection in the same attempt: its effect once, the job succeeded on attempt 1', async () => {
    const client = createClient({ connectionString: url, jobs: [MidBody], poolMax: 4 });
    const worker = new Worker(client, { queue: 'midbody', concurrency: 1, heartbeatMs: 3_000, listen: false, pollMs: 100 });
    worker.events.on('error', () => undefined);
    const runs: number[] = [];
    worker.handle(MidBody, async ({ n }, ctx) => {
      await ctx.txStep('write', async (tx) => {
        runs.push(n);
        await tx.query('insert into reset_effects (job_id, n) values ($1, $2)', [ctx.job.id, 100 + n]);
        // The first run of each body: every connection reset under it, its insert rolled back with it.
        if (runs.filter((r) => r === n).length === 1) proxy.dropAll();
        await tx.query('select 1');
      });
      return { n };
    });
    const running = worker.run();
    try {
      const jobs = await client.enqueueMany([1, 2].map((n) => ({ job: MidBody, payload: { n } })));
      const rows = await waitFor(
        async () =>
          (
            await db.pool.query<{ status: string; attempt: number; last_error: unknown }>(
              'select status, attempt, last_error from workhorse.jobs where id = any($1::bigint[]) order by id',
              [jobs.map((j) => j.id)],
            )
          ).rows,
        (r) => r.every((x) => x.status !== 'ready' && x.status !== 'running'),
        { what: 'the two jobs to end', timeoutMs: 30_000 },
      );
      expect(rows.map(({ status, attempt }) => ({ status, attempt })), JSON.stringify(rows.map((r) => r.last_error))).toEqual([
        { status: 'succeeded', attempt: 1 },
        { status: 'succeeded', attempt: 1 },
      ]);
      expect([...runs].sort()).toEqual([1, 1, 2, 2]);
      const effects = await db.pool.query<{ n: number }>('select n from reset_effects where n > 100 order by n');
      expect(effects.rows.map((r) => r.n)).toEqual([101, 102]);
    } finally {
      await worker.stop();
      await running;
      await client.close();
    }
  }, 60_000);
});

describe("a transactional step whose body's own call fails with a network error code", () => {
  it('is not run again: the attempt fails with that error, the body run once', async () => {
    const Own = defineJob({ type: 'reset.own', queue: 'own', schema: z.object({}), retry: { maxAttempts: 1 } });
    const client = createClient({ connectionString: url, jobs: [Own], poolMax: 4 });
    const worker = new Worker(client, { queue: 'own', concurrency: 1, heartbeatMs: 3_000, listen: false, pollMs: 100 });
    worker.events.on('error', () => undefined);
    let runs = 0;
    worker.handle(Own, async (_p, ctx) => {
      await ctx.txStep('call', async () => {
        runs++;
        // An HTTP client's failure inside the body: its code is a socket's, its connection is not the step's.
        throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
      });
    });
    const running = worker.run();
    try {
      const { id } = await client.enqueue(Own, {});
      const job = await waitFor(() => client.getJob(id), (j) => j?.status === 'failed', { what: 'the job to fail', timeoutMs: 15_000 });
      expect(job!.lastError).toMatchObject({ message: 'socket hang up' });
      expect(runs).toBe(1);
    } finally {
      await worker.stop();
      await running;
      await client.close();
    }
  }, 30_000);
});

// A claim whose answer arrives late: the network held the server's answers
// back (the statement ran and committed at once) and delivered them more
// than a lease later. The leases it took were stamped when it ran, so they
// had run out by the time the worker heard of them: the worker started the
// handlers, its watchdog aborted them at once, nothing handed the leases
// back, and recovery counted an attempt for each (a job of maxAttempts 1
// ended failed without its handler finishing). A claim answered after half
// a lease now starts nothing: its leases are handed back at once, unstarted
// (ledger outcome released, which no orphan allowance counts), and the jobs
// run once each with no attempt lost. So in a tick, which has no next
// heartbeat to hand them back, and in a worker that is stopping.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import type { TcpProxy } from '../../certify/tcpProxy.js';
import { Client as TickClient } from '../../src/client/client.js';
import { createClient, defineJob, Worker, type Client } from '../../src/index.js';
import { runTick } from '../../src/tick/runTick.js';
import app, { SleepJob } from '../fixtures/tick-app.js';
import { createProxiedDatabase, type ProxiedDatabase } from '../helpers/proxiedDatabase.js';
import { sleep, waitFor } from '../helpers/wait.js';

const Once = defineJob({ type: 'late.once', schema: z.object({ n: z.number() }), retry: { maxAttempts: 1 } });

let proxied: ProxiedDatabase;
let proxy: TcpProxy;
let client: Client;
/** Enqueues past the proxy. */
let direct: Client;

beforeAll(async () => {
  proxied = await createProxiedDatabase();
  proxy = proxied.proxy;
  client = createClient({ connectionString: proxied.url, jobs: [Once], poolMax: 4, callTimeoutMs: 20_000 });
  direct = createClient({ connectionString: proxied.db.url, jobs: [Once], poolMax: 2 });
});

afterAll(async () => {
  await client?.close();
  await direct?.close();
  await proxied?.close();
});

describe('a claim answered more than a lease after it ran', () => {
  it('starts none of its jobs and hands them back unstarted: each runs once, no attempt lost', async () => {
    const lines: string[] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')));
    const ran: number[] = [];
    const worker = new Worker(client, { heartbeatMs: 500, pollMs: 100, listen: false, concurrency: 4 });
    worker.handle(Once, async ({ n }) => {
      ran.push(n);
      await sleep(1_000); // longer than the watchdog's interval
      return n;
    });
    const db = proxied.db.pool;
    const ids = (await direct.enqueueMany([0, 1, 2, 3].map((n) => ({ job: Once, payload: { n } })))).map((j) => j.id);
    // The worker's first claim runs and commits; its answer (and every other) waits in the proxy.
    proxy.holdAnswersOnceSent('claim_many_v1');
    const run = worker.run();
    try {
      await waitFor(
        async () => (await db.query('select count(*)::int n from workhorse.job_runtime')).rows[0].n,
        (n) => n === 4,
        { what: 'a claim to lease the jobs' },
      );
      await sleep(3_000); // the lease is 2 s: it runs out while the answer waits
      proxy.holdAnswers(false);
      const rows = await waitFor(
        async () => (await db.query<{ status: string; attempt: number }>('select status, attempt from workhorse.jobs where id = any($1::bigint[]) order by id', [ids])).rows,
        (rs) => rs.every((r) => r.status === 'succeeded' || r.status === 'failed'),
        { what: 'every job to end', timeoutMs: 30_000 },
      );
      expect(rows.map((r) => [r.status, r.attempt])).toEqual(ids.map(() => ['succeeded', 1]));
      expect([...ran].sort()).toEqual([0, 1, 2, 3]);
      const outcomes = await db.query<{ outcome: string; n: number }>('select outcome, count(*)::int n from workhorse.job_attempts group by outcome order by outcome');
      expect(outcomes.rows).toEqual([{ outcome: 'released', n: 4 }]);
      expect(lines.filter((l) => l.includes('ClaimAnsweredLateError'))).toHaveLength(1);
    } finally {
      proxy.holdAnswers(false);
      spy.mockRestore();
      await worker.stop();
      await run;
    }
  }, 60_000);

  it('in a worker that is stopping: the jobs go back to ready, no attempt counted', async () => {
    const worker = new Worker(client, { heartbeatMs: 500, pollMs: 100, listen: false, concurrency: 4 });
    worker.events.on('error', () => undefined);
    let ran = 0;
    worker.handle(Once, async () => void ran++);
    const db = proxied.db.pool;
    await db.query('truncate workhorse.jobs cascade');
    const ids = (await direct.enqueueMany([0, 1, 2, 3].map((n) => ({ job: Once, payload: { n } })))).map((j) => j.id);
    proxy.holdAnswersOnceSent('claim_many_v1');
    const run = worker.run();
    try {
      await waitFor(async () => (await db.query('select count(*)::int n from workhorse.job_runtime')).rows[0].n, (n) => n === 4, { what: 'a claim to lease the jobs' });
      await sleep(1_100); // past half the 2 s lease
      const stopping = worker.stop();
      await sleep(200);
      proxy.holdAnswers(false);
      await stopping;
    } finally {
      proxy.holdAnswers(false);
      await run;
    }
    expect(ran).toBe(0);
    expect((await db.query('select count(*)::int n from workhorse.job_runtime')).rows[0].n).toBe(0);
    const rows = await db.query<{ status: string; attempt: number }>('select status, attempt from workhorse.jobs where id = any($1::bigint[])', [ids]);
    expect(rows.rows.map((r) => [r.status, r.attempt])).toEqual(ids.map(() => ['ready', 0]));
  }, 60_000);

  it('in a tick, which beats no more once its pass ends: the jobs go back to ready, no attempt counted', async () => {
    const db = proxied.db.pool;
    await db.query('truncate workhorse.jobs cascade');
    const c = new TickClient({ connectionString: proxied.db.url, jobs: [SleepJob] });
    await c.enqueueMany(Array.from({ length: 4 }, () => ({ job: SleepJob, payload: { ms: 10 }, options: { maxAttempts: 1 } })));
    await c.close();
    proxy.holdAnswersOnceSent('claim_many_v1');
    const releasing = sleep(1_400).then(() => proxy.holdAnswers(false));
    try {
      const summary = await runTick({ app, connectionString: proxied.url, deadline: new Date(Date.now() + 10_000), safetyMarginMs: 3_000, concurrency: 4, heartbeatMs: 500, log: () => undefined });
      expect(summary.claimed).toBe(0);
    } finally {
      await releasing;
    }
    expect((await db.query('select count(*)::int n from workhorse.job_runtime')).rows[0].n).toBe(0);
    const rows = await db.query<{ status: string; attempt: number }>("select status, attempt from workhorse.jobs where type = 'tick.sleep'");
    expect(rows.rows.map((r) => [r.status, r.attempt])).toEqual([0, 1, 2, 3].map(() => ['ready', 0]));
  }, 60_000);
});

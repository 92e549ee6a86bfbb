// A transactional step or a spawn whose connection cannot be had (the
// server restarting) waits for one while the job holds its lease, as a
// fenced write does: nothing of it ran, so nothing is ambiguous. It used to
// reject with the raw connect error, failing the attempt: a job of
// maxAttempts 1 failed for good on a 1.5 s restart. Here the server of a
// cluster this file owns is stopped just as each step starts and started
// again 1.5 s later (the lease lasts 4 s); each job succeeds on its first
// attempt, its step's row written once, its child spawned once.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, Worker } from '../../src/index.js';
import { migrate } from '../../src/db/migrate.js';
import { waitFor } from '../helpers/wait.js';
import { sleep, useFaultCluster } from './harness.js';

const fault = useFaultCluster();

const TxOnce = defineJob({ type: 'fault.tx', schema: z.object({}), retry: { maxAttempts: 1 } });
const SpawnOnce = defineJob({ type: 'fault.spawn', schema: z.object({}), retry: { maxAttempts: 1 } });
const Child = defineJob({ type: 'fault.child', schema: z.object({}) });

describe('a step whose connection cannot be had while the server restarts', () => {
  it.each([
    ['ctx.txStep', TxOnce],
    ['ctx.spawn', SpawnOnce],
  ] as const)('%s waits for one: the job succeeds on its first attempt, its write made once', async (_what, job) => {
    const { cluster } = fault();
    await migrate({ connectionString: cluster.url() });
    const client = createClient({ connectionString: cluster.url(), jobs: [TxOnce, SpawnOnce, Child], poolMax: 4 });
    await client.pool.query('create table if not exists tx_effects (job_id bigint)');
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started = false;
    const worker = new Worker(client, { heartbeatMs: 1_000, pollMs: 50 });
    worker.handle(TxOnce, async (_p, ctx) => {
      started = true;
      await gate;
      await ctx.txStep('effect', async (tx) => {
        await tx.query('insert into tx_effects (job_id) values ($1)', [ctx.job.id]);
      });
    });
    worker.handle(SpawnOnce, async (_p, ctx) => {
      started = true;
      await gate;
      await ctx.spawn('child', Child, {});
    });
    worker.handle(Child, async () => undefined);
    const errors: unknown[] = [];
    worker.events.on('error', (e) => errors.push(e));
    const running = worker.run();
    try {
      const { id } = await client.enqueue(job, {});
      await waitFor(() => started, (s) => s, { timeoutMs: 10_000, what: 'the handler to start' });
      await cluster.halt('fast');
      release();
      await sleep(1_500);
      await cluster.resume();
      const done = await waitFor(() => client.getJob(id).catch(() => null), (j) => j !== null && j.status !== 'ready' && j.status !== 'running' && j.status !== 'waiting', {
        timeoutMs: 30_000,
        what: 'the job to end',
      });
      expect(done!.status, JSON.stringify(done!.lastError)).toBe('succeeded');
      expect(done!.attempt).toBe(1);
      if (job === TxOnce) {
        const effects = await client.pool.query('select count(*)::int as n from tx_effects where job_id = $1', [id]);
        expect(effects.rows[0].n).toBe(1);
      } else {
        const children = await client.pool.query(`select count(*)::int as n from workhorse.jobs where type = 'fault.child'`);
        expect(children.rows[0].n).toBe(1);
      }
    } finally {
      await worker.stop({ timeoutMs: 5_000 }).catch(() => undefined);
      await running.catch(() => undefined);
      await client.close();
    }
  }, 60_000);
});

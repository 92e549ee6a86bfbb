// A transactional step whose body ends the step's transaction itself
// (`tx.query('rollback')` or `'commit'`, say a helper that manages its own
// transaction). The step's record then ran outside it, in autocommit, and
// was kept: the step was recorded as done although its writes were rolled
// back (and never ran again), or were committed apart from the record. The
// step now fails with StepTransactionEndedError, not retried, and records
// nothing; a savepoint inside the step is still fine.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob, type Client } from '../../src/index.js';
import type { TestDatabase } from '../helpers/db.js';
import { startRunningWorker, type RunningWorker } from '../helpers/runningWorker.js';
import { waitFor } from '../helpers/wait.js';

const Ends = defineJob({
  type: 'dx.txstep.ends',
  schema: z.object({ end: z.enum(['rollback', 'commit', 'commit; begin', 'savepoint']) }),
  retry: { maxAttempts: 3, backoff: { kind: 'fixed', baseMs: 10, maxMs: 10 } },
});

let fx: RunningWorker;
let db: TestDatabase;
let client: Client;
const bodies = new Map<string, number>();

beforeAll(async () => {
  fx = await startRunningWorker([Ends], { workerId: 'txstep-ends', concurrency: 4, heartbeatMs: 500, pollMs: 100 }, (w) => {
    w.handle(Ends, async ({ end }, ctx) => {
      await ctx.txStep('pay', async (tx) => {
        bodies.set(ctx.job.id, (bodies.get(ctx.job.id) ?? 0) + 1);
        if (end === 'savepoint') await tx.query('savepoint s');
        await tx.query('insert into effects (job_id) values ($1)', [ctx.job.id]);
        await tx.query(end === 'savepoint' ? 'release savepoint s' : end);
        return 'paid';
      });
      return 'done';
    });
  });
  ({ db, client } = fx);
  await db.pool.query('create table effects (job_id bigint)');
});

afterAll(async () => {
  await fx?.stop();
});

const count = async (sql: string, id: string) => (await db.pool.query<{ n: number }>(sql, [id])).rows[0]!.n;

describe('a transactional step whose body ends its transaction', () => {
  it.each(['rollback', 'commit', 'commit; begin'] as const)('(%s) fails the job without a retry and records nothing', async (end) => {
    const { id } = await client.enqueue(Ends, { end });
    const failed = await waitFor(() => client.getJob(id), (j) => j!.status === 'failed' || j!.status === 'succeeded', { what: 'the job to end' });
    expect(failed!.status).toBe('failed');
    expect(failed!.attempt).toBe(1);
    expect(failed!.lastError).toMatchObject({ name: 'StepTransactionEndedError', code: 'step_transaction_ended' });
    expect(bodies.get(id)).toBe(1);
    expect(await count('select count(*)::int as n from workhorse.job_steps where job_id = $1', id)).toBe(0);
  });

  it('a savepoint released inside the step is still one transaction: recorded, its writes committed', async () => {
    const { id } = await client.enqueue(Ends, { end: 'savepoint' });
    const done = await waitFor(() => client.getJob(id), (j) => j!.status === 'failed' || j!.status === 'succeeded', { what: 'the job to end' });
    expect(done!.status).toBe('succeeded');
    expect(await count('select count(*)::int as n from workhorse.job_steps where job_id = $1', id)).toBe(1);
    expect(await count('select count(*)::int as n from effects where job_id = $1', id)).toBe(1);
  });
});

// A transactional step whose body sits idle in its transaction longer than
// the step's limit (two heartbeats: an API call or a sleep inside the
// body) is ended by PostgreSQL (25P03). It is not run again in the same
// attempt, as a step whose connection broke for a database fault is (it
// would sit idle again): the attempt fails with a StepIdleTimeoutError
// naming the limit and the fix, its writes rolled back. It said "the
// database connection broke ... the job will retry" as a
// DatabaseUnavailableError, blaming the database, on its last attempt too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../../src/index.js';
import { startRunningWorker, type RunningWorker } from '../helpers/runningWorker.js';
import { waitFor } from '../helpers/wait.js';

const Idle = defineJob({ type: 'idle.step', schema: z.object({}), retry: { maxAttempts: 1 } });

let w: RunningWorker;
let runs = 0;

beforeAll(async () => {
  w = await startRunningWorker([Idle], { heartbeatMs: 250, listen: false, pollMs: 50 }, (worker) =>
    worker.handle(Idle, async (_p, ctx) => {
      await ctx.txStep('slow', async (tx) => {
        runs++;
        await tx.query('insert into idle_effects values (1)');
        await new Promise((r) => setTimeout(r, 1_200)); // past the 500 ms limit
        await tx.query('select 1');
      });
    }),
  );
  w.worker.events.on('error', () => undefined);
  await w.db.pool.query('create table idle_effects (n int)');
});
afterAll(async () => {
  await w?.stop();
});

describe('a transactional step idle in its transaction past the limit', () => {
  it('fails its attempt with a StepIdleTimeoutError naming the limit, run once, its write rolled back', async () => {
    const { id } = await w.client.enqueue(Idle, {});
    const job = await waitFor(() => w.client.getJob(id), (j) => j?.status === 'failed', { what: 'the job to fail', timeoutMs: 15_000 });
    expect(job!.lastError).toMatchObject({
      name: 'StepIdleTimeoutError',
      code: 'step_idle_timeout',
      message: expect.stringMatching(
        /^transactional step "slow" of job \d+: its transaction sat idle for longer than the step's limit \(500 ms, two heartbeats\) .* raise heartbeatMs$/,
      ),
    });
    expect(runs).toBe(1);
    expect((await w.db.pool.query('select count(*)::int n from idle_effects')).rows[0].n).toBe(0);
  });
});

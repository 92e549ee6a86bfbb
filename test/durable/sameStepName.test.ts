// Steps of one name called at once in one execution (a Promise.all of two
// calls). Both ran their body: two ctx.txStep calls both committed their
// transaction's writes although only one step was recorded, and two
// ctx.step calls both ran, the second answering the first's result. A name
// now runs once per job: a second call while the first is in flight gets
// the first's result. And a transactional step whose record loses to one
// committed meanwhile (record_step_v1 answers the earlier record) rolls its
// own transaction back instead of committing its writes, a savepoint left
// open in the body or not. A step whose body calls a step of its own name
// waited for itself (the job hung until its timeout): that call is refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob, type Client } from '../../src/index.js';
import { createContext, type JobContext } from '../../src/worker/context.js';
import { JobAbort } from '../../src/worker/jobAbort.js';
import type { TestDatabase } from '../helpers/db.js';
import { startRunningWorker, type RunningWorker } from '../helpers/runningWorker.js';
import { sleep, waitFor } from '../helpers/wait.js';

const Twice = defineJob({ type: 'dx.same.twice', schema: z.object({ kind: z.enum(['step', 'tx', 'mixed']) }), retry: { maxAttempts: 1 } });
const Nested = defineJob({ type: 'dx.same.nested', schema: z.object({ inner: z.enum(['step', 'tx']) }), retry: { maxAttempts: 1 } });
const Lost = defineJob({ type: 'dx.same.lost', schema: z.object({ savepoint: z.boolean() }), retry: { maxAttempts: 1 } });

let fx: RunningWorker;
let db: TestDatabase;
let client: Client;
const bodies = new Map<string, string[]>();
const ran = (id: string, v: string) => bodies.set(id, [...(bodies.get(id) ?? []), v]);

beforeAll(async () => {
  fx = await startRunningWorker([Twice, Lost, Nested], { workerId: 'same-step', concurrency: 4, heartbeatMs: 500, pollMs: 100 }, (w) => {
    w.handle(Twice, async ({ kind }, ctx) => {
      const id = ctx.job.id;
      return Promise.all(
        ['A', 'B'].map((v, i) =>
          kind === 'step' || (kind === 'mixed' && i === 1)
            ? ctx.step('charge', async () => {
                ran(id, v);
                await sleep(50 + 50 * i);
                return v;
              })
            : ctx.txStep('charge', async (tx) => {
                ran(id, v);
                await tx.query('insert into effects (job_id, tag) values ($1, $2)', [id, v]);
                await sleep(50 + 50 * i);
                return v;
              }),
        ),
      );
    });
    w.handle(Nested, async ({ inner }, ctx) =>
      ctx.step('charge', async () => (inner === 'step' ? ctx.step('charge', () => 'inner') : ctx.txStep('charge', async () => 'inner'))),
    );
    // Two contexts of the one lease, as two processes holding it would be:
    // the second's record finds the first's, committed while it ran.
    // With a savepoint left open, the record is written in a subtransaction.
    w.handle(Lost, async ({ savepoint }, ctx) => {
      const other = createContext(ctx.job, new JobAbort(), (ctx as JobContext).deps);
      const charge = (v: string, ms: number) => async (tx: import('pg').PoolClient) => {
        if (savepoint) await tx.query('savepoint a');
        await tx.query('insert into effects (job_id, tag) values ($1, $2)', [ctx.job.id, v]);
        await sleep(ms);
        return v;
      };
      return Promise.all([ctx.txStep('charge', charge('A', 50)), sleep(10).then(() => other.txStep('charge', charge('B', 300)))]);
    });
  });
  ({ db, client } = fx);
  await db.pool.query('create table effects (job_id bigint, tag text)');
});

afterAll(async () => {
  await fx?.stop();
});

async function effects(id: string): Promise<string[]> {
  return (await db.pool.query<{ tag: string }>('select tag from effects where job_id = $1 order by tag', [id])).rows.map((r) => r.tag);
}

describe('steps of one name called at once', () => {
  it.each(['step', 'tx', 'mixed'] as const)('(%s) run the body once, and both calls answer its result', async (kind) => {
    const { id } = await client.enqueue(Twice, { kind });
    const done = await waitFor(() => client.getJob(id), (j) => j!.status === 'succeeded' || j!.status === 'failed', { what: 'the job to finish' });
    expect(done!.status).toBe('succeeded');
    expect(done!.result).toEqual(['A', 'A']);
    expect(bodies.get(id)).toEqual(['A']);
    if (kind !== 'step') expect(await effects(id)).toEqual(['A']);
    const steps = await db.pool.query('select name, result from workhorse.job_steps where job_id = $1', [id]);
    expect(steps.rows).toEqual([{ name: 'charge', result: 'A' }]);
  });

  it.each([false, true])("rolls back a transactional step whose record lost to one committed meanwhile, and answers the winner's result (savepoint open: %s)", async (savepoint) => {
    const { id } = await client.enqueue(Lost, { savepoint });
    const done = await waitFor(() => client.getJob(id), (j) => j!.status === 'succeeded' || j!.status === 'failed', { what: 'the job to finish' });
    expect(done!.status).toBe('succeeded');
    expect(done!.result).toEqual(['A', 'A']);
    expect(await effects(id)).toEqual(['A']);
  });
});

describe('a step whose body calls a step of its own name', () => {
  it.each(['step', 'tx'] as const)('(inner %s) is refused with a ValidationError naming the step, and the job fails instead of hanging', async (inner) => {
    const { id } = await client.enqueue(Nested, { inner });
    const done = await waitFor(() => client.getJob(id), (j) => j!.status === 'succeeded' || j!.status === 'failed', { what: 'the job to finish', timeoutMs: 10_000 });
    expect(done!.status).toBe('failed');
    expect(done!.lastError).toMatchObject({ name: 'ValidationError' });
    const what = inner === 'step' ? 'step "charge"' : 'transactional step "charge"';
    expect(done!.lastError!.message).toContain(`${what} was called while the body of a step of that name runs`);
    const steps = await db.pool.query('select name from workhorse.job_steps where job_id = $1', [id]);
    expect(steps.rows).toEqual([]);
  });
});

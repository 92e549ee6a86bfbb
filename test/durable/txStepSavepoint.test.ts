// A transactional step whose body leaves a savepoint open: `savepoint a`
// without a release, or the documented pattern of catching an error and
// `rollback to savepoint a`. The job succeeded, but the step's writes and
// its record were rolled back, and its body ran again on every replay:
// whether the record was the step's own was told from the row's xmin, which
// is a subtransaction's id then. The step now commits once (and a record
// that lost to one committed meanwhile still rolls its writes back with a
// savepoint open: sameStepName.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob, type Client } from '../../src/index.js';
import type { TestDatabase } from '../helpers/db.js';
import { startRunningWorker, type RunningWorker } from '../helpers/runningWorker.js';
import { waitFor } from '../helpers/wait.js';

const Saves = defineJob({
  type: 'dx.txstep.savepoint',
  schema: z.object({ body: z.enum(['left open', 'rolled back to', 'released']) }),
  retry: { maxAttempts: 1 },
});

let fx: RunningWorker;
let db: TestDatabase;
let client: Client;
const bodies = new Map<string, number>();

beforeAll(async () => {
  fx = await startRunningWorker([Saves], { workerId: 'txstep-savepoint', concurrency: 4, heartbeatMs: 500, pollMs: 100 }, (w) => {
    w.handle(Saves, async ({ body }, ctx) => {
      const paid = await ctx.txStep('pay', async (tx) => {
        bodies.set(ctx.job.id, (bodies.get(ctx.job.id) ?? 0) + 1);
        await tx.query('savepoint a');
        if (body === 'rolled back to') {
          try {
            await tx.query('select 1/0');
          } catch {
            await tx.query('rollback to savepoint a');
          }
        }
        if (body === 'released') await tx.query('release savepoint a');
        await tx.query('insert into effects (job_id, tag) values ($1, $2)', [ctx.job.id, body]);
        return 'paid';
      });
      // A replay after the wait passes the recorded step without running its body.
      await ctx.sleep('after', 50);
      return paid;
    });
  });
  ({ db, client } = fx);
  await db.pool.query('create table effects (job_id bigint, tag text)');
});

afterAll(async () => {
  await fx?.stop();
});

const effects = async (id: string) =>
  (await db.pool.query<{ tag: string }>('select tag from effects where job_id = $1 order by tag', [id])).rows.map((r) => r.tag);
const finished = (id: string) =>
  waitFor(() => client.getJob(id), (j) => j!.status === 'succeeded' || j!.status === 'failed', { what: 'the job to finish' });

describe('a transactional step whose body leaves a savepoint open', () => {
  it.each(['left open', 'rolled back to', 'released'] as const)('(savepoint %s) commits its writes and its record once', async (body) => {
    const { id } = await client.enqueue(Saves, { body });
    const done = await finished(id);
    expect(done!.status, JSON.stringify(done!.lastError)).toBe('succeeded');
    expect(done!.result).toBe('paid');
    expect(bodies.get(id)).toBe(1);
    expect(await effects(id)).toEqual([body]);
    const steps = await db.pool.query('select name, result from workhorse.job_steps where job_id = $1', [id]);
    expect(steps.rows).toEqual([{ name: 'pay', result: 'paid' }]);
  });
});

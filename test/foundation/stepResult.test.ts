// A step whose result the database cannot store (a BigInt, a NUL in a
// string) is never recorded, so a retry would run its body again: the job
// fails at once instead, with a ValidationError, after one run of the body.
// A transactional step's writes roll back with it.
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, defineJob, Worker, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Steps = defineJob({
  type: 'stepresult.run',
  schema: z.object({ k: z.enum(['bigint', 'nul', 'txBigint', 'fn', 'undefined']) }),
  retry: { maxAttempts: 3, backoff: { kind: 'fixed', baseMs: 0, maxMs: 0 } },
});

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Steps], poolMax: 4 });
  await db.pool.query('create table step_runs (job_id bigint not null, k text not null)');
});
afterAll(async () => {
  await client.close();
  await db.drop();
});

describe('a step result the database cannot store', () => {
  it('fails the job at once, after one run of the step body, and keeps a transactional step\'s writes out', async () => {
    const keys = ['bigint', 'nul', 'txBigint', 'fn', 'undefined'] as const;
    const ids = (await client.enqueueMany(keys.map((k) => ({ job: Steps, payload: { k } })))).map((r) => r.id);
    const worker = new Worker(client, { concurrency: 5, pollMs: 50 }).handle(Steps, async ({ k }, ctx) => {
      const log = () => client.pool.query('insert into step_runs values ($1, $2)', [ctx.job.id, k]);
      if (k === 'txBigint') {
        await ctx.txStep('tx', async (tx) => {
          await tx.query('insert into step_runs values ($1, $2)', [ctx.job.id, 'tx-write']);
          return { n: 1n };
        });
      } else {
        await ctx.step('s', async () => {
          await log();
          return k === 'bigint' ? { n: 1n } : k === 'nul' ? { s: 'a\u0000b' } : k === 'fn' ? log : undefined;
        });
      }
      return 'done';
    });
    const run = worker.run();
    const jobs = await waitFor(
      () => Promise.all(ids.map((id) => client.getJob(id))),
      (js) => js.every((j) => j!.status === 'succeeded' || j!.status === 'failed'),
      { what: 'every job to settle' },
    );
    await worker.stop();
    await run;
    expect(jobs.map((j) => [j!.status, j!.attempt])).toEqual([
      ['failed', 1],
      ['failed', 1],
      ['failed', 1],
      ['failed', 1],
      ['succeeded', 1],
    ]);
    for (const j of jobs.slice(0, 4)) {
      expect(j!.lastError).toMatchObject({ name: 'ValidationError' });
      expect((j!.lastError as { message: string }).message).toMatch(/returned a result that is not JSON PostgreSQL can store/);
    }
    expect((jobs[1]!.lastError as { message: string }).message).toMatch(/at s: it must not contain a NUL/);
    expect((jobs[3]!.lastError as { message: string }).message).toMatch(/a function is not JSON: it would be recorded as null/);
    const runs = await db.pool.query<{ k: string; n: number }>('select k, count(*)::int as n from step_runs group by k order by k');
    expect(runs.rows).toEqual([
      { k: 'bigint', n: 1 },
      { k: 'fn', n: 1 },
      { k: 'nul', n: 1 },
      { k: 'undefined', n: 1 },
    ]);
  });
});

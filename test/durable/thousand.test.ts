// Durable waits (7): a thousand jobs, each sleeping and then waiting for a
// signal, with the signals sent concurrently while the jobs run, sleep and
// wait (some before their wait opens, some during it). Two workers share
// them. Every job finishes exactly once: its transactional step wrote one
// row, its first step ran once, and it succeeded with the payload of its
// signal.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const N = 1000;
const Many = defineJob({ type: 'dx.many', schema: z.object({ n: z.number() }) });

let db: TestDatabase;
let client: Client;
const workers: Worker[] = [];
const runs: Promise<void>[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query('create table dx_first (job_id bigint not null)');
  await db.pool.query('create table dx_done (job_id bigint primary key, n integer not null, token text not null)');
  client = createClient({ connectionString: db.url, jobs: [Many], poolMax: 10 });
  for (const id of ['many-a', 'many-b']) {
    const w = new Worker(client, { workerId: id, concurrency: 25, heartbeatMs: 500, pollMs: 2000 });
    w.handle(Many, async (p, ctx) => {
      await ctx.step('first', async () => {
        await client.pool.query('insert into dx_first (job_id) values ($1)', [ctx.job.id]);
        return true;
      });
      await ctx.sleep('nap', 100 + (p.n % 7) * 50);
      const go = await ctx.waitForSignal('go', { schema: z.object({ token: z.string() }) });
      await ctx.txStep('done', async (tx) => {
        await tx.query('insert into dx_done (job_id, n, token) values ($1, $2, $3)', [ctx.job.id, p.n, go.token]);
      });
      return { token: go.token };
    });
    workers.push(w);
  }
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await Promise.all(runs);
  await client?.close();
  await db?.drop();
});

describe('a thousand sleeping, signalled jobs', () => {
  it('all finish exactly once', async () => {
    const ids = (await client.enqueueMany(Array.from({ length: N }, (_, n) => ({ job: Many, payload: { n } })))).map((r) => r.id);
    for (const w of workers) runs.push(w.run());
    // Signals go out concurrently (16 at a time) while the jobs are claimed, sleep and wait.
    const outcomes: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < N) {
          const i = next++;
          outcomes.push((await client.signal(ids[i]!, 'go', { token: `t${i}` })).outcome);
        }
      }),
    );
    expect(outcomes).toHaveLength(N);
    expect(outcomes.every((o) => o === 'delivered' || o === 'kept')).toBe(true);

    await waitFor(
      async () => (await db.pool.query<{ n: number }>(`select count(*)::int as n from workhorse.jobs where status = 'succeeded'`)).rows[0]!.n,
      (n) => n === N,
      { timeoutMs: 120_000, intervalMs: 200, what: 'every job to succeed' },
    );
    const done = await db.pool.query<{ n: number; distinct_jobs: number; right_tokens: number }>(
      `select count(*)::int as n, count(distinct d.job_id)::int as distinct_jobs,
              count(*) filter (where d.token = j.result->>'token' and d.token = 't' || (array_position($1::bigint[], d.job_id) - 1))::int as right_tokens
         from dx_done d join workhorse.jobs j on j.id = d.job_id`,
      [ids],
    );
    expect(done.rows[0]).toEqual({ n: N, distinct_jobs: N, right_tokens: N });
    const first = await db.pool.query<{ n: number; distinct_jobs: number }>('select count(*)::int as n, count(distinct job_id)::int as distinct_jobs from dx_first');
    expect(first.rows[0]).toEqual({ n: N, distinct_jobs: N });
    // No wake-up counted as an attempt, and nothing is left waiting or leased.
    const rows = await db.pool.query<{ attempts: number[] }>('select array_agg(distinct attempt) as attempts from workhorse.jobs');
    expect(rows.rows[0]!.attempts).toEqual([1]);
    expect((await db.pool.query('select count(*)::int as n from workhorse.job_runtime')).rows[0].n).toBe(0);
    expect((await db.pool.query('select count(*)::int as n from workhorse.job_signals where consumed_at is null')).rows[0].n).toBe(0);
  }, 180_000);
});

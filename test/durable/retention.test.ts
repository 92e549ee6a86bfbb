// Durable waits and sys.retention: a job that has waited far longer than
// the retention period is never deleted (it is unfinished, however long
// it waits); a finished job goes with its waits, the signals it received
// and its child links, while its children (jobs of their own) stay until
// they are old enough themselves, and a child stays, however old, while its
// parent exists: a cancelled parent retried joins its children again, and
// one deleted under it made the join answer null for its result.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { runRetention } from '../../src/schedules/retention.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Kid = defineJob({ type: 'rx.kid', schema: z.object({}) });
const Parent = defineJob({ type: 'rx.parent', schema: z.object({ waitForever: z.boolean() }) });
const SlowKid = defineJob({ type: 'rx.slowkid', schema: z.object({}) });
const Joiner = defineJob({ type: 'rx.joiner', schema: z.object({}) });

let db: TestDatabase;
let client: Client;
let worker: Worker;
let running: Promise<void>;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Kid, Parent, SlowKid, Joiner], poolMax: 4 });
  worker = new Worker(client, { workerId: 'retention', concurrency: 4, heartbeatMs: 200 });
  worker.handle(Kid, () => 'kid');
  worker.handle(Parent, async (p, ctx) => {
    if (p.waitForever) await ctx.waitForSignal('never');
    const kid = await ctx.spawn('kid', Kid, {});
    await ctx.waitForSignal('go');
    return ctx.join('kid', [kid]);
  });
  worker.handle(SlowKid, async (_p, ctx) => {
    await ctx.waitForSignal('go');
    return 'slow';
  });
  worker.handle(Joiner, async (_p, ctx) => {
    const kid = await ctx.spawn('kid', Kid, {});
    const slow = await ctx.spawn('slow', SlowKid, {});
    return ctx.join('both', [kid, slow]);
  });
  running = worker.run();
});

afterAll(async () => {
  await worker?.stop();
  await running;
  await client?.close();
  await db?.drop();
});

const count = async (sql: string, id: string) => (await db.pool.query<{ n: number }>(sql, [id])).rows[0]!.n;

describe('retention and waiting jobs', () => {
  it('never deletes a waiting job; deletes a finished one with its waits, signals and child links', async () => {
    const waiting = await client.enqueue(Parent, { waitForever: true });
    const done = await client.enqueue(Parent, { waitForever: false });
    await waitFor(() => client.getJob(waiting.id), (j) => j!.status === 'waiting', { what: 'the first parent to wait' });
    await waitFor(() => client.getJob(done.id), (j) => j!.status === 'waiting', { what: 'the second parent to wait' });
    await client.signal(done.id, 'go', null);
    await waitFor(() => client.getJob(done.id), (j) => j!.status === 'succeeded', { what: 'the second parent to finish' });
    const kid = (await db.pool.query<{ id: string }>('select child_id::text as id from workhorse.job_children where parent_id = $1', [done.id])).rows[0]!.id;
    await waitFor(() => client.getJob(kid), (j) => j!.status === 'succeeded', { what: 'the child to finish' });

    // Age everything far past the retention period: the waiting job too.
    await db.pool.query(
      `update workhorse.jobs set created_at = now() - interval '30 days', updated_at = now() - interval '30 days',
              finished_at = case when finished_at is not null then now() - interval '30 days' end
        where id = $1 or id = $2`,
      [waiting.id, done.id],
    );
    await db.pool.query(`update workhorse.job_waits set started_at = now() - interval '30 days' where job_id = $1`, [waiting.id]);
    const r = await runRetention(client, { olderThanMs: 86_400_000 });
    expect(r.jobs).toBe(1);

    expect((await client.getJob(waiting.id))!.status).toBe('waiting');
    expect(await count('select count(*)::int as n from workhorse.job_waits where job_id = $1', waiting.id)).toBe(1);
    expect(await client.getJob(done.id)).toBeNull();
    expect(await count('select count(*)::int as n from workhorse.job_waits where job_id = $1', done.id)).toBe(0);
    expect(await count('select count(*)::int as n from workhorse.job_signals where job_id = $1', done.id)).toBe(0);
    expect(await count('select count(*)::int as n from workhorse.job_children where parent_id = $1', done.id)).toBe(0);
    // The child is a job of its own, finished just now: it stays.
    expect((await client.getJob(kid))!.status).toBe('succeeded');
    await client.cancel(waiting.id);
  });

  it('keeps a finished child while its parent is unfinished, so a late join still finds it', async () => {
    const parent = await client.enqueue(Parent, { waitForever: false });
    await waitFor(() => client.getJob(parent.id), (j) => j!.status === 'waiting', { what: 'the parent to wait' });
    const kid = (await db.pool.query<{ id: string }>('select child_id::text as id from workhorse.job_children where parent_id = $1', [parent.id])).rows[0]!.id;
    await waitFor(() => client.getJob(kid), (j) => j!.status === 'succeeded', { what: 'the child to finish' });
    await db.pool.query(`update workhorse.jobs set finished_at = now() - interval '30 days' where id = $1`, [kid]);

    await runRetention(client, { olderThanMs: 86_400_000 });
    expect((await client.getJob(kid))!.status).toBe('succeeded');

    await client.signal(parent.id, 'go', null);
    const joined = await waitFor(() => client.getJob(parent.id), (j) => j!.status === 'succeeded', { what: 'the parent to join and finish' });
    expect(joined!.result).toEqual(['kid']);

    // The parent finished: the old child stays while the parent does, and goes after it.
    await runRetention(client, { olderThanMs: 86_400_000 });
    expect((await client.getJob(kid))!.status).toBe('succeeded');
    await db.pool.query(`update workhorse.jobs set finished_at = now() - interval '30 days' where id = $1`, [parent.id]);
    await runRetention(client, { olderThanMs: 86_400_000 });
    expect(await client.getJob(parent.id)).toBeNull();
    await runRetention(client, { olderThanMs: 86_400_000 });
    expect(await client.getJob(kid)).toBeNull();
  });

  it("keeps a cancelled parent's finished child, so the parent retried joins its result", async () => {
    const parent = await client.enqueue(Joiner, {});
    await waitFor(() => client.getJob(parent.id), (j) => j!.status === 'waiting' && j!.wait?.kind === 'join', { what: 'the parent to wait in its join' });
    const kids = (await db.pool.query<{ id: string; name: string }>('select child_id::text as id, name from workhorse.job_children where parent_id = $1', [parent.id])).rows;
    const kid = kids.find((k) => k.name === 'kid')!.id;
    const slow = kids.find((k) => k.name === 'slow')!.id;
    await waitFor(() => client.getJob(kid), (j) => j!.status === 'succeeded', { what: 'the quick child to finish' });
    await client.cancel(parent.id);
    expect((await client.getJob(slow))!.status).toBe('cancelled');
    await db.pool.query(`update workhorse.jobs set finished_at = now() - interval '30 days' where id = $1`, [kid]);

    await runRetention(client, { olderThanMs: 86_400_000 });
    expect((await client.getJob(kid))!.status).toBe('succeeded');

    // durable.md: retry the cancelled children before the parent, whose join waits again.
    await client.retry(slow);
    await waitFor(() => client.getJob(slow), (j) => j!.status === 'waiting', { what: 'the slow child to wait again' });
    await client.signal(slow, 'go', null);
    await waitFor(() => client.getJob(slow), (j) => j!.status === 'succeeded', { what: 'the slow child to finish' });
    await client.retry(parent.id);
    const joined = await waitFor(() => client.getJob(parent.id), (j) => j!.status === 'succeeded' || j!.status === 'failed', { what: 'the parent to finish' });
    expect([joined!.status, joined!.result]).toEqual(['succeeded', ['kid', 'slow']]);
  });
});

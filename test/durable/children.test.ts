// Durable waits (4): child jobs. A parent spawns children (once per name)
// and joins them without a lease: in `all` mode it gets every result in
// order; in `any` mode it resumes once one child succeeded; a child that
// fails makes the join throw ChildJobFailedError with each child's error,
// which the parent may catch; cancelling a waiting parent cancels its
// unfinished children but not a detached one; and the parent's replays
// (one per resumption) spawn nothing new.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { createApp } from '../../src/http/createApp.js';
import { defineApp } from '../../src/app/defineApp.js';
import { defineJob } from '../../src/client/defineJob.js';
import { ChildJobFailedError } from '../../src/errors.js';
import { isSuspension } from '../../src/worker/suspension.js';
import { PermanentJobError } from '../../src/errorJson.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Kid = z.object({ behave: z.enum(['succeed', 'fail', 'waitForSignal']), n: z.number() });
const Child = defineJob({ type: 'dx.child', schema: Kid });
const Parent = defineJob({
  type: 'dx.parent',
  schema: z.object({ mode: z.enum(['all', 'any']), kids: z.array(Kid), detachLast: z.boolean().default(false) }),
});

const TOKEN = 'family-token-0123456789abcdef';

let db: TestDatabase;
let client: Client;
let worker: Worker;
let running: Promise<void>;
/** The child ids each run of a parent saw from spawn, per parent. */
const spawnedSeen = new Map<string, string[][]>();

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Child, Parent], poolMax: 8 });
  worker = new Worker(client, { workerId: 'family', concurrency: 6, heartbeatMs: 200 });
  worker.handle(Child, async (p, ctx) => {
    if (p.behave === 'fail') throw new PermanentJobError(`child ${p.n} broke`);
    if (p.behave === 'waitForSignal') await ctx.waitForSignal('finish');
    return { n: p.n, doubled: p.n * 2 };
  });
  worker.handle(Parent, async (p, ctx) => {
    const kids = [];
    for (const [i, kid] of p.kids.entries()) {
      kids.push(await ctx.spawn(`kid-${i}`, Child, kid, { detached: p.detachLast && i === p.kids.length - 1 }));
    }
    const seen = spawnedSeen.get(ctx.job.id) ?? [];
    seen.push(kids.map((k) => k.id));
    spawnedSeen.set(ctx.job.id, seen);
    try {
      return { results: await ctx.join('kids', kids, { mode: p.mode }) };
    } catch (err) {
      if (isSuspension(err)) throw err;
      if (err instanceof ChildJobFailedError) {
        return { failed: err.children.map((c) => ({ status: c.status, message: (c.error as { message?: string } | undefined)?.message ?? null })) };
      }
      throw err;
    }
  });
  running = worker.run();
});

afterAll(async () => {
  await worker?.stop();
  await running;
  await client?.close();
  await db?.drop();
});

async function childrenOf(parent: string) {
  return (
    await db.pool.query<{ id: string; status: string; parent: string; name: string }>(
      `select j.id::text, j.status, j.parent_id::text as parent, c.name
         from workhorse.job_children c join workhorse.jobs j on j.id = c.child_id
        where c.parent_id = $1 order by c.name`,
      [parent],
    )
  ).rows;
}

const finished = (id: string) =>
  waitFor(() => client.getJob(id), (j) => ['succeeded', 'failed', 'cancelled'].includes(j!.status), { what: `job ${id} to finish`, timeoutMs: 30_000 });

describe('spawn and join', () => {
  it('all: returns every child result in order; replays spawn nothing new', async () => {
    const { id } = await client.enqueue(Parent, {
      mode: 'all',
      kids: [
        { behave: 'succeed', n: 1 },
        { behave: 'succeed', n: 2 },
        { behave: 'waitForSignal', n: 3 },
      ],
    });
    // The parent suspends on its join until the third child is told to finish.
    await waitFor(() => client.getJob(id), (j) => j!.status === 'waiting', { what: 'the parent to wait' });
    expect((await client.getJob(id))!.wait).toMatchObject({ name: 'kids', kind: 'join' });
    const waitingKids = await waitFor(() => childrenOf(id), (k) => k.length === 3 && k[2]!.status === 'waiting', { what: 'the third child to wait' });
    await client.signal(waitingKids[2]!.id, 'finish', null);
    const done = await finished(id);
    expect(done).toMatchObject({ status: 'succeeded', attempt: 1 });
    expect(done!.result).toEqual({ results: [1, 2, 3].map((n) => ({ n, doubled: n * 2 })) });
    const kids = await childrenOf(id);
    expect(kids.map((k) => [k.name, k.status, k.parent])).toEqual([
      ['kid-0', 'succeeded', id],
      ['kid-1', 'succeeded', id],
      ['kid-2', 'succeeded', id],
    ]);
    // The first run and the replay after the join saw the same three children.
    const seen = spawnedSeen.get(id)!;
    expect(seen).toHaveLength(2);
    for (const run of seen) expect(run).toEqual(kids.map((k) => k.id));
    expect((await db.pool.query(`select count(*)::int as n from workhorse.jobs where type = 'dx.child' and parent_id = $1`, [id])).rows[0].n).toBe(3);
  });

  it('all: a failing child makes the join throw ChildJobFailedError carrying each child error, which the parent catches', async () => {
    const { id } = await client.enqueue(Parent, {
      mode: 'all',
      kids: [
        { behave: 'succeed', n: 1 },
        { behave: 'fail', n: 2 },
      ],
    });
    const done = await finished(id);
    expect(done!.status).toBe('succeeded');
    expect(done!.result).toEqual({
      failed: [
        { status: 'succeeded', message: null },
        { status: 'failed', message: 'child 2 broke' },
      ],
    });
  });

  it('any: resumes once one child succeeded, while the others still wait', async () => {
    const { id } = await client.enqueue(Parent, {
      mode: 'any',
      kids: [
        { behave: 'waitForSignal', n: 1 },
        { behave: 'succeed', n: 2 },
      ],
    });
    const done = await finished(id);
    expect(done!.status).toBe('succeeded');
    expect(done!.result).toEqual({ results: [null, { n: 2, doubled: 4 }] });
    const kids = await childrenOf(id);
    expect(kids.map((k) => k.status)).toEqual(['waiting', 'succeeded']);
    await client.signal(kids[0]!.id, 'finish', null);
    await finished(kids[0]!.id);
  });

  it('cancelling a waiting parent cancels its unfinished children, not a detached one', async () => {
    const { id } = await client.enqueue(Parent, {
      mode: 'all',
      detachLast: true,
      kids: [
        { behave: 'waitForSignal', n: 1 },
        { behave: 'succeed', n: 2 },
        { behave: 'waitForSignal', n: 3 },
      ],
    });
    await waitFor(() => childrenOf(id), (k) => k.length === 3 && k[1]!.status === 'succeeded' && k[0]!.status === 'waiting' && k[2]!.status === 'waiting', {
      what: 'two children to wait and one to finish',
    });
    await waitFor(() => client.getJob(id), (j) => j!.status === 'waiting', { what: 'the parent to wait' });
    expect((await client.cancel(id)).status).toBe('cancelled');
    const kids = await childrenOf(id);
    expect(kids.map((k) => k.status)).toEqual(['cancelled', 'succeeded', 'waiting']);
    // The detached child lives on and finishes on its own.
    await client.signal(kids[2]!.id, 'finish', null);
    expect((await finished(kids[2]!.id))!.status).toBe('succeeded');
    const cancelled = (await client.getJob(id))!;
    expect(cancelled.status).toBe('cancelled');
    // Its open join still names the children to retry before it (it showed no wait once cancelled).
    expect(cancelled.wait).toMatchObject({ kind: 'join' });
    expect([...(cancelled.wait as { children: string[] }).children].sort()).toEqual(kids.map((k) => k.id).sort());
  });

  it('POST /jobs/:id/cancel with { keepChildren: true } cancels the parent alone; a bad body changes nothing', async () => {
    const http = createApp({
      client,
      app: defineApp({ jobs: [Child, Parent], configure: () => undefined }),
      apiToken: TOKEN,
      tick: () => Promise.reject(new Error('no ticks in this test')),
      log: () => undefined,
    });
    const cancel = (id: string, body: string) =>
      http.request(`/jobs/${id}/cancel`, { method: 'POST', body, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' } });
    const { id } = await client.enqueue(Parent, { mode: 'all', kids: [{ behave: 'waitForSignal', n: 1 }] });
    await waitFor(() => childrenOf(id), (k) => k.length === 1 && k[0]!.status === 'waiting', { what: 'the child to wait' });
    await waitFor(() => client.getJob(id), (j) => j!.status === 'waiting', { what: 'the parent to wait' });
    const bad = await cancel(id, JSON.stringify({ keepChildren: 'yes' }));
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('validation_failed');
    expect((await cancel(id, JSON.stringify({ keep: true }))).status).toBe(400);
    expect((await client.getJob(id))!.status).toBe('waiting');
    const res = await cancel(id, JSON.stringify({ keepChildren: true }));
    expect(res.status).toBe(200);
    expect(((await res.json()) as { status: string }).status).toBe('cancelled');
    const kids = await childrenOf(id);
    expect(kids.map((k) => k.status)).toEqual(['waiting']);
    await client.signal(kids[0]!.id, 'finish', null);
    expect((await finished(kids[0]!.id))!.status).toBe('succeeded');
  });
});

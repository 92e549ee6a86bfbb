// Foundation (8): stop() drains. No new claims once it is called, the
// handlers already running finish and settle, jobs claimed but never started
// go back to ready, and the worker leaves the registry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { sleep, waitFor } from '../helpers/wait.js';
import { latch } from './support/latch.js';
import { attemptsOf, jobRow } from './support/rows.js';

const Slow = defineJob({ type: 'fx.slow', schema: z.object({ n: z.number() }) });

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Slow], poolMax: 6 });
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

describe('stop() drains', () => {
  it('claims nothing new, lets active handlers finish, returns unstarted claims and deregisters', async () => {
    const gate = latch();
    const started: number[] = [];
    const w = new Worker(client, { workerId: 'drainer', concurrency: 2, prefetch: 2, heartbeatMs: 100, pollMs: 20 });
    w.handle(Slow, async (p) => {
      started.push(p.n);
      await gate.promise;
      return { n: p.n };
    });
    const ids = (await client.enqueueMany([1, 2, 3, 4].map((n) => ({ job: Slow, payload: { n }, options: { priority: n } })))).map((r) => r.id);
    const running = w.run();

    // Two handlers run, two more claims wait in the local buffer.
    await waitFor(() => started.length, (n) => n === 2, { what: 'two handlers to start' });
    await waitFor(() => w.runtimeState().buffered, (n) => n === 2, { what: 'two buffered claims' });
    expect(started).toEqual([1, 2]);

    const stopped = w.stop();
    const late = await client.enqueue(Slow, { n: 5 });
    await sleep(300); // a few polls and heartbeats: still no claim
    expect(await jobRow(db.pool, late.id)).toMatchObject({ status: 'ready', attempt: 0 });
    expect(w.runtimeState()).toMatchObject({ stopping: true, registered: true });

    gate.open();
    await stopped;
    await running;

    // The two active handlers finished and settled.
    for (const id of ids.slice(0, 2)) expect(await jobRow(db.pool, id)).toMatchObject({ status: 'succeeded', attempt: 1 });
    // The two never started went back to ready with no attempt counted.
    for (const id of ids.slice(2)) {
      expect(await jobRow(db.pool, id)).toMatchObject({ status: 'ready', attempt: 0 });
      expect((await attemptsOf(db.pool, id)).map((a) => a.outcome)).toEqual(['released']);
    }
    expect(started).toEqual([1, 2]);
    expect((await db.pool.query('select * from workhorse.job_runtime')).rows).toEqual([]);
    expect(await client.admin.listWorkers()).toEqual([]);
    expect(w.runtimeState()).toMatchObject({ registered: false, running: false, active: 0, buffered: 0 });

    // Everything left is still there for the next worker.
    const next = new Worker(client, { workerId: 'next', concurrency: 5, listen: false, heartbeatMs: 60_000 }).handle(Slow, (p) => ({ n: p.n }));
    await next.runOnce();
    await next.stop();
    for (const id of [...ids, late.id]) expect((await jobRow(db.pool, id)).status).toBe('succeeded');
  });

  it('resolves the run() promise when the signal passed to run() aborts', async () => {
    const ac = new AbortController();
    const w = new Worker(client, { workerId: 'signalled', heartbeatMs: 100, pollMs: 20 }).handle(Slow, () => null);
    const running = w.run(ac.signal);
    await waitFor(() => w.runtimeState().registered, Boolean, { what: 'registration' });
    ac.abort();
    await running;
    expect(await client.admin.listWorkers()).toEqual([]);
  });
});

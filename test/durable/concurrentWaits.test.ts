// Durable waits (4): waits opened together. A handler that races a signal
// against a sleep (Promise.race) or waits for two signals (Promise.all)
// opens both waits before it suspends. The job must suspend on all of them:
// due at the earliest wake time of its open waits, ready at once when one
// of them is satisfied already, so a timer raced against a wait without a
// timeout fires instead of leaving the job waiting forever.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Race = defineJob({ type: 'dx.race', schema: z.object({ timerMs: z.number() }) });
const Both = defineJob({ type: 'dx.both', schema: z.object({}) });

let db: TestDatabase;
let client: Client;
let worker: Worker;
let running: Promise<void>;

beforeAll(async () => {
  db = await createTestDatabase();
  // A small pool beside many slots: waits opened together are often
  // written after the first of them answered.
  client = createClient({ connectionString: db.url, jobs: [Race, Both], poolMax: 3 });
  worker = new Worker(client, { workerId: 'concurrent-waits', concurrency: 12, heartbeatMs: 200, pollMs: 5000 });
  worker.handle(Race, async (p, ctx) =>
    Promise.race([ctx.waitForSignal('go').then((v) => ({ by: 'signal', v })), ctx.sleep('timer', p.timerMs).then(() => ({ by: 'timer' }))]),
  );
  worker.handle(Both, async (_p, ctx) => Promise.all([ctx.waitForSignal('x'), ctx.waitForSignal('y')]));
  running = worker.run();
});

afterAll(async () => {
  await worker?.stop();
  await running;
  await client?.close();
  await db?.drop();
});

describe('waits opened together', () => {
  it('a sleep raced against a signal wakes the job when it is due, whichever wait suspended it', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push((await client.enqueue(Race, { timerMs: 400 })).id);
    const jobs = await waitFor(
      () => Promise.all(ids.map((id) => client.getJob(id))),
      (js) => js.every((j) => j!.status === 'succeeded'),
      { what: 'every raced timer to fire', timeoutMs: 15_000 },
    );
    for (const j of jobs) expect(j!.result).toEqual({ by: 'timer' });
    // The timer resolved once; the signal wait that lost is closed as lost when the job finishes (no wait stays open).
    const waits = await db.pool.query<{ name: string; n: number; resolved: number; lost: number }>(
      `select name, count(*)::int as n, count(resolved_at)::int as resolved, count(*) filter (where outcome = 'lost')::int as lost
         from workhorse.job_waits where job_id = any($1::bigint[]) group by name order by name`,
      [ids],
    );
    expect(waits.rows).toEqual([
      { name: 'go', n: 12, resolved: 12, lost: 12 },
      { name: 'timer', n: 12, resolved: 12, lost: 0 },
    ]);
  });

  it('a signal that wins the race resumes the job with its payload', async () => {
    const { id } = await client.enqueue(Race, { timerMs: 60_000 });
    const waiting = await waitFor(() => client.getJob(id), (j) => j!.status === 'waiting', { what: 'the race to wait' });
    // Due at the timer's wake time, not never: the earliest of its open waits.
    expect(waiting!.runAt.getTime()).toBeLessThan(Date.now() + 61_000);
    expect(waiting!.runAt.getFullYear()).toBeLessThan(9999);
    expect(await client.signal(id, 'go', 7)).toEqual({ outcome: 'delivered', jobId: id });
    const done = await waitFor(() => client.getJob(id), (j) => j!.status === 'succeeded', { what: 'the signalled race to finish' });
    expect(done!.result).toEqual({ by: 'signal', v: 7 });
  });

  it('Promise.all of two signals resumes on either and finishes with both', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await client.enqueue(Both, {})).id);
    await waitFor(
      () => Promise.all(ids.map((id) => client.getJob(id))),
      (js) => js.every((j) => j!.status === 'waiting'),
      { what: 'the jobs to wait' },
    );
    for (const id of ids) {
      await client.signal(id, 'y', 'Y');
      await client.signal(id, 'x', 'X');
    }
    const jobs = await waitFor(
      () => Promise.all(ids.map((id) => client.getJob(id))),
      (js) => js.every((j) => j!.status === 'succeeded'),
      { what: 'both signals to reach every job' },
    );
    for (const j of jobs) expect(j!.result).toEqual(['X', 'Y']);
  });
});

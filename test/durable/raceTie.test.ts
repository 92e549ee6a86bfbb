// Durable waits (20): a race between waits that are both satisfied. A
// checkout races the payment signal against a grace-period sleep; the
// payment arrived before the job first ran and the sleep is already due,
// so both waits resolve when they open. Which one the race returned
// depended on which database call answered first, on the first run and
// again on every replay: a third of the jobs took one branch before their
// next wait and the other after it. The first wait to resolve (as
// recorded) now wins, and in a tie the one opened first, on every run.
// Both are recorded resolved at their own opening, and the two open on
// separate connections: the one the database took second lost although
// the handler opened it first (about one run in eight). An instant within
// the openings of the waits opened together now counts as one, so the
// handler's order decides, whichever order it opens them in.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Checkout = defineJob({ type: 'dx.checkout.tie', schema: z.object({ sleepFirst: z.boolean() }) });

let db: TestDatabase;
let client: Client;
let worker: Worker;
let running: Promise<void>;
/** The branch each run of each job took. */
const branches = new Map<string, string[]>();

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Checkout], poolMax: 6 });
  worker = new Worker(client, { workerId: 'race-tie', concurrency: 8, heartbeatMs: 200, pollMs: 300 });
  worker.handle(Checkout, async ({ sleepFirst }, ctx) => {
    const paid = () => ctx.waitForSignal('paid').then(() => 'paid');
    const expired = () => ctx.sleep('grace', 0).then(() => 'expired');
    const r = await (sleepFirst ? Promise.race([expired(), paid()]) : Promise.race([paid(), expired()]));
    branches.set(ctx.job.id, [...(branches.get(ctx.job.id) ?? []), r]);
    await ctx.waitForSignal('shipped');
    return r;
  });
  running = worker.run();
});

afterAll(async () => {
  await worker?.stop();
  await running;
  await client?.close();
  await db?.drop();
});

describe('a race of two satisfied waits', () => {
  it.each([false, true])('returns the wait the handler opened first, on the first run and on the replay (the sleep first: %s)', async (sleepFirst) => {
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      const { id } = await client.enqueue(Checkout, { sleepFirst }, { delayMs: 300 });
      expect(await client.signal(id, 'paid', { amount: 1 })).toEqual({ outcome: 'kept', jobId: id });
      ids.push(id);
    }
    const all = () => Promise.all(ids.map((id) => client.getJob(id)));
    await waitFor(all, (js) => js.every((j) => j!.status === 'waiting'), { what: 'every checkout to wait for shipping', timeoutMs: 20_000 });
    for (const id of ids) await client.signal(id, 'shipped', null);
    const done = await waitFor(all, (js) => js.every((j) => j!.status === 'succeeded'), { what: 'every checkout to finish', timeoutMs: 20_000 });
    for (const j of done) {
      const runs = branches.get(j!.id)!;
      expect(runs, `job ${j!.id}`).toHaveLength(2);
      expect(runs, `job ${j!.id}`).toEqual(sleepFirst ? ['expired', 'expired'] : ['paid', 'paid']);
      expect(j!.result).toBe(runs[0]);
    }
  });
});

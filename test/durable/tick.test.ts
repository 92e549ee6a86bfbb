// Durable waits (6): in ticks. A job that sleeps 3 s is suspended by one
// tick, which returns before the wake time instead of spending its time
// waiting; a tick before the wake time finds nothing to do (a waiting job
// costs it nothing); a tick after it finishes the job, with the step before
// the sleep not run again and no attempt counted for the wake-up.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineApp, defineJob, runTick, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Nap = defineJob({ type: 'tick.nap', schema: z.object({ ms: z.number().int().min(0) }) });
const runs = { before: 0, after: 0 };
const app = defineApp({
  jobs: [Nap],
  configure(worker) {
    worker.handle(Nap, async ({ ms }, ctx) => {
      await ctx.step('before', () => ++runs.before);
      await ctx.sleep('nap', ms);
      runs.after++;
      return { attempt: ctx.job.attempt };
    });
  },
});

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Nap], poolMax: 2 });
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

const tick = () => runTick({ app, connectionString: db.url, deadline: new Date(Date.now() + 20_000), concurrency: 4, heartbeatMs: 1_000 });

describe('a sleep in ticks', () => {
  it('is suspended by one tick and finished by a later one', async () => {
    const { id } = await client.enqueue(Nap, { ms: 3_000 });
    const first = await tick();
    const firstReturned = new Date();
    expect(first).toMatchObject({ claimed: 1, suspended: 1, succeeded: 0, failed: 0, retried: 0 });
    const waiting = await client.getJob(id);
    expect(waiting).toMatchObject({ status: 'waiting', attempt: 1, wait: { name: 'nap', kind: 'sleep' } });
    // The first tick did not wait for the sleep: it returned before the wake time.
    expect(firstReturned.getTime()).toBeLessThan(waiting!.wait!.wakeAt!.getTime());

    // Before the wake time a tick has nothing to do.
    const early = await tick();
    expect(early).toMatchObject({ claimed: 0, suspended: 0, succeeded: 0 });
    expect((await client.getJob(id))!.status).toBe('waiting');

    const wakeAt = waiting!.wait!.wakeAt!.getTime();
    await waitFor(() => Date.now(), (now) => now > wakeAt + 50, { timeoutMs: 10_000, what: 'the wake time' });
    const later = await tick();
    expect(later).toMatchObject({ claimed: 1, succeeded: 1, suspended: 0 });
    expect(await client.getJob(id)).toMatchObject({ status: 'succeeded', attempt: 1, result: { attempt: 1 } });
    expect(runs).toEqual({ before: 1, after: 1 });
  });
});

// handleBatch: jobs of one type claimed together go to one call; each member
// keeps its own result, failure and retry.
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, defineJob, Worker, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Embed = defineJob({
  type: 'text.embed',
  schema: z.object({ text: z.string() }),
  retry: { maxAttempts: 2, backoff: { kind: 'fixed', baseMs: 0, maxMs: 0 } },
});

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Embed], poolMax: 4 });
});

afterAll(async () => {
  await client.close();
  await db.drop();
});

describe('handleBatch', () => {
  it('runs claimed jobs of one type in batches and settles each member with its own outcome', async () => {
    const ids = (await client.enqueueMany(['a', 'bb', 'boom', 'dddd', 'eeeee'].map((text) => ({ job: Embed, payload: { text } })))).map(
      (r) => r.id,
    );
    const calls: string[][] = [];
    const worker = new Worker(client, { concurrency: 10, pollMs: 100 }).handleBatch(
      Embed,
      async (payloads, ctxs) => {
        calls.push(payloads.map((p) => p.text));
        expect(ctxs.map((c) => c.job.type)).toEqual(payloads.map(() => 'text.embed'));
        return payloads.map((p) => (p.text === 'boom' ? new Error('provider rejected it') : { length: p.text.length }));
      },
      { maxBatch: 3 },
    );
    const run = worker.run();
    const jobs = await waitFor(
      () => Promise.all(ids.map((id) => client.getJob(id))),
      (js) => js.every((j) => j!.status === 'succeeded' || j!.status === 'failed'),
      { what: 'every job to settle' },
    );
    await worker.stop();
    await run;
    expect(jobs.map((j) => j!.status)).toEqual(['succeeded', 'succeeded', 'failed', 'succeeded', 'succeeded']);
    expect(jobs[1]!.result).toEqual({ length: 2 });
    expect((jobs[2]!.lastError as { message: string }).message).toBe('provider rejected it');
    expect(jobs[2]!.attempt).toBe(2);
    expect(Math.max(...calls.map((c) => c.length))).toBeLessThanOrEqual(3);
    expect(calls.some((c) => c.length > 1)).toBe(true);
  });

  it('fails every member at once, not retried, when the batch returns the wrong number of outcomes', async () => {
    const { id } = await client.enqueue(Embed, { text: 'x' }, { maxAttempts: 3 });
    const worker = new Worker(client, { concurrency: 4, pollMs: 100 }).handleBatch(Embed, async () => []);
    const run = worker.run();
    const job = await waitFor(() => client.getJob(id), (j) => j!.status === 'failed', { what: 'the job to fail' });
    await worker.stop();
    await run;
    expect((job!.lastError as { name: string }).name).toBe('ValidationError');
    expect((job!.lastError as { message: string }).message).toContain('it was given 1 job and returned 0 outcomes');
    // A mistake of the handler's, deterministic: it was retried to maxAttempts (25 by default).
    expect(job!.attempt).toBe(1);
  });

  it('says what a batch handler returned when it is not an array', async () => {
    const { id } = await client.enqueue(Embed, { text: 'y' }, { maxAttempts: 1 });
    const worker = new Worker(client, { concurrency: 4, pollMs: 100 }).handleBatch(Embed, async () => ({ ok: true }) as unknown as unknown[]);
    const run = worker.run();
    const job = await waitFor(() => client.getJob(id), (j) => j!.status === 'failed', { what: 'the job to fail' });
    await worker.stop();
    await run;
    expect((job!.lastError as { message: string }).message).toMatch(/must return an array of one outcome per job.*returned an object, not an array/);
  });

  it("refuses a spawn on a member's context, as it refuses its waits, and makes no child", async () => {
    const { id } = await client.enqueue(Embed, { text: 'spawner' }, { maxAttempts: 1 });
    let refused: unknown;
    const worker = new Worker(client, { concurrency: 4, pollMs: 100 }).handleBatch(Embed, async (payloads, ctxs) => {
      refused = await (ctxs[0] as unknown as { spawn: (...a: unknown[]) => Promise<unknown> }).spawn('kid', Embed, { text: 'child' }).catch((e: unknown) => e);
      return payloads.map(() => 'done');
    });
    const run = worker.run();
    await waitFor(() => client.getJob(id), (j) => j!.status === 'succeeded', { what: 'the job to end' });
    await worker.stop();
    await run;
    expect((refused as Error).message).toBe(`spawn "kid": a batch handler's jobs cannot spawn children`);
    const children = await db.pool.query<{ n: number }>('select count(*)::int n from workhorse.jobs where parent_id = $1', [id]);
    expect(children.rows[0]!.n).toBe(0);
  });

  it('awaits outcomes that are promises (a map of async calls without Promise.all), each rejection failing its own job', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      const ids = (await client.enqueueMany(['p1', 'p-bad', 'p333'].map((text) => ({ job: Embed, payload: { text }, options: { maxAttempts: 1 } })))).map((r) => r.id);
      const worker = new Worker(client, { concurrency: 10, pollMs: 100 }).handleBatch(
        Embed,
        async (payloads) =>
          payloads.map(async (p) => {
            await new Promise((r) => setTimeout(r, 10));
            if (p.text === 'p-bad') throw new Error('provider refused "p-bad"');
            return { length: p.text.length };
          }),
        { maxBatch: 3 },
      );
      const run = worker.run();
      const jobs = await waitFor(
        () => Promise.all(ids.map((id) => client.getJob(id))),
        (js) => js.every((j) => j!.status === 'succeeded' || j!.status === 'failed'),
        { what: 'every job to settle' },
      );
      await worker.stop();
      await run;
      // Each was stored as {} (a promise written as JSON), and the rejection ended the process.
      expect(jobs.map((j) => [j!.status, j!.result])).toEqual([
        ['succeeded', { length: 2 }],
        ['failed', null],
        ['succeeded', { length: 4 }],
      ]);
      expect((jobs[1]!.lastError as { message: string }).message).toBe('provider refused "p-bad"');
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

// A progress value the database cannot store (a BigInt, a cycle, a NUL or a
// lone surrogate in a string) is refused before it is sent, with a
// ValidationError naming its path that is not retried: a handler that lets
// it propagate fails at once after one run, and one that catches it carries
// on with nothing written.
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, defineJob, ValidationError, Worker, type Client } from '../../src/index.js';
import { assertStorableProgress } from '../../src/worker/progressValue.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const KEYS = ['bigint', 'cycle', 'nul', 'surrogate', 'caught'] as const;
const Progress = defineJob({
  type: 'progress.bad',
  schema: z.object({ k: z.enum(KEYS) }),
  retry: { maxAttempts: 3, backoff: { kind: 'fixed', baseMs: 0, maxMs: 0 } },
});

function badValue(k: (typeof KEYS)[number]): unknown {
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  switch (k) {
    case 'bigint':
      return { n: 1n };
    case 'cycle':
      return cycle;
    case 'nul':
      return { done: ['a', 'b\u0000c'] };
    default:
      return { s: 'x\ud800' };
  }
}

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Progress], poolMax: 4 });
  await db.pool.query('create table progress_runs (job_id bigint not null)');
});
afterAll(async () => {
  await client.close();
  await db.drop();
});

describe('a progress value the database cannot store', () => {
  it('is a ValidationError naming its path, not retried, and writes nothing', async () => {
    const ids = (await client.enqueueMany(KEYS.map((k) => ({ job: Progress, payload: { k } })))).map((r) => r.id);
    const caught: unknown[] = [];
    const worker = new Worker(client, { concurrency: 5, pollMs: 50 }).handle(Progress, async ({ k }, ctx) => {
      await client.pool.query('insert into progress_runs values ($1)', [ctx.job.id]);
      if (k !== 'caught') await ctx.progress(badValue(k));
      try {
        await ctx.progress({ n: 1n });
      } catch (err) {
        caught.push(err);
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
      expect(j!.lastError).toMatchObject({ name: 'ValidationError', code: 'validation_failed' });
      expect((j!.lastError as { message: string }).message).toMatch(/^progress of job \d+ is not JSON PostgreSQL can store/);
      expect(j!.progress).toBeNull();
    }
    expect((jobs[0]!.lastError as { message: string }).message).toMatch(/BigInt/);
    expect((jobs[1]!.lastError as { message: string }).message).toMatch(/circular/);
    expect((jobs[2]!.lastError as { message: string }).message).toMatch(/at done\.1: it must not contain a NUL/);
    expect((jobs[3]!.lastError as { message: string }).message).toMatch(/at s: it must not contain a lone UTF-16 surrogate/);

    // The handler that caught its refusal got a typed error with the path and went on.
    expect(caught).toHaveLength(1);
    expect(caught[0]).toBeInstanceOf(ValidationError);
    expect((caught[0] as { retryable?: unknown }).retryable).toBe(false);
    expect(jobs[4]!.progress).toBeNull();
    expect(jobs[4]!.result).toBe('done');

    const runs = await db.pool.query<{ n: number }>('select count(*)::int as n from progress_runs');
    expect(runs.rows[0]!.n).toBe(5);
  });

  it('refuses a value JSON would store as null (NaN, Infinity, an invalid Date, an empty array slot), naming its path', () => {
    const pathOf = (v: unknown) => {
      try {
        assertStorableProgress('7', v, 1024);
      } catch (err) {
        expect(err).toBeInstanceOf(ValidationError);
        expect((err as { retryable?: unknown }).retryable).toBe(false);
        return (err as ValidationError).issues[0]!.path;
      }
      return 'accepted';
    };
    expect(pathOf({ done: NaN })).toEqual(['done']);
    expect(pathOf({ steps: [1, Infinity] })).toEqual(['steps', 1]);
    expect(pathOf({ at: new Date(Number.NaN) })).toEqual(['at']);
    expect(pathOf([1, , 3])).toEqual([1]);
    expect(pathOf({ done: 3, of: null, note: undefined })).toBe('accepted');
    expect(pathOf(undefined)).toBe('accepted');
  });

  it('refuses a value over the client maxPayloadBytes, and takes one at the limit', () => {
    const at = { s: 'x'.repeat(1024 - 8) }; // {"s":"…"} is 8 bytes around the string
    expect(() => assertStorableProgress('7', at, 1024)).not.toThrow();
    let caught: unknown;
    try {
      assertStorableProgress('7', { s: `${at.s}y` }, 1024);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    expect((caught as { retryable?: unknown }).retryable).toBe(false);
    expect((caught as Error).message).toBe("progress of job 7 is too large (its JSON is 1025 bytes, over the client's maxPayloadBytes, 1024); nothing was written");
  });

  it("a worker applies its client's maxPayloadBytes to ctx.progress", async () => {
    const small = createClient({ connectionString: db.url, jobs: [Progress], poolMax: 2, maxPayloadBytes: 1024 });
    try {
      const { id } = await small.enqueue(Progress, { k: 'caught' });
      const outcomes: string[] = [];
      const worker = new Worker(small, { concurrency: 1, pollMs: 50 }).handle(Progress, async (_p, ctx) => {
        await ctx.progress({ s: 'x'.repeat(900) });
        try {
          await ctx.progress({ s: 'x'.repeat(2000) });
          outcomes.push('written');
        } catch (err) {
          outcomes.push((err as Error).message);
        }
        return 'done';
      });
      const run = worker.run();
      const job = await waitFor(() => small.getJob(id), (j) => j!.status === 'succeeded', { what: 'the job to succeed' });
      await worker.stop();
      await run;
      expect(outcomes).toEqual([`progress of job ${id} is too large (its JSON is 2008 bytes, over the client's maxPayloadBytes, 1024); nothing was written`]);
      expect(job!.progress).toEqual({ s: 'x'.repeat(900) });
    } finally {
      await small.close();
    }
  });
});

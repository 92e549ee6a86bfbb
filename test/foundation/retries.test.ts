// Foundation (6a): a failing job retries with its backoff policy until
// max_attempts, then ends `failed` for good; a permanent error ends it at
// once. The backoff is computed by the database from the persisted policy.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { PermanentJobError } from '../../src/errorJson.js';
import { Worker } from '../../src/worker/worker.js';
import type { WorkerOptions } from '../../src/worker/options.js';
import { ConfigError, WorkhorseError } from '../../src/errors.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { attemptsOf, jobRow } from './support/rows.js';

const Flaky = defineJob({
  type: 'fx.flaky',
  schema: z.object({ failTimes: z.number().int() }),
  retry: { maxAttempts: 3, backoff: { kind: 'exponential', baseMs: 1000, maxMs: 3_000 } },
});

let db: TestDatabase;
let client: Client;
const workers: Worker[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Flaky], poolMax: 4 });
});

beforeEach(async () => {
  await db.pool.query('truncate workhorse.jobs, workhorse.job_attempts');
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

function flakyWorker(id: string, options: Pick<WorkerOptions, 'retryDelayMs'> = {}): Worker {
  const w = new Worker(client, { workerId: id, listen: false, heartbeatMs: 60_000, ...options });
  w.handle(Flaky, (p, ctx) => {
    if (p.failTimes < 0) throw new PermanentJobError('this will never work');
    if (ctx.job.attempt <= p.failTimes) throw new Error(`failure on attempt ${ctx.job.attempt}`);
    return { attempt: ctx.job.attempt };
  });
  workers.push(w);
  return w;
}

/** The delay the database scheduled for the retry: run_at minus the settle time. */
async function scheduledDelayMs(id: string): Promise<number> {
  const r = await db.pool.query<{ ms: number }>(
    'select (extract(epoch from run_at - updated_at) * 1000)::int as ms from workhorse.jobs where id = $1',
    [id],
  );
  return r.rows[0]!.ms;
}

describe('retries', () => {
  it('retries a failing job with exponential backoff and ends it `failed` after max_attempts', async () => {
    const { id } = await client.enqueue(Flaky, { failTimes: 99 });
    const w = flakyWorker('retrier');

    const delays: number[] = [];
    for (let attempt = 1; attempt <= 3; attempt++) {
      expect(await w.runOnce()).toBe(true);
      const job = await jobRow(db.pool, id);
      expect(job.attempt).toBe(attempt);
      expect(job.last_error).toMatchObject({ name: 'Error', message: `failure on attempt ${attempt}` });
      if (attempt < 3) {
        expect(job.status).toBe('ready');
        delays.push(await scheduledDelayMs(id));
        // Not due yet: the backoff holds it back.
        expect(await w.runOnce()).toBe(false);
        // Pull it forward instead of waiting (retry on a scheduled job keeps its attempts).
        await client.retry(id);
      } else {
        expect(job.status).toBe('failed');
        expect(job.finished_at).toBeInstanceOf(Date);
      }
    }
    // base 1000 ms, doubling per attempt.
    expect(delays).toEqual([1000, 2000]);
    expect((await attemptsOf(db.pool, id)).map((a) => [a.attempt, a.outcome])).toEqual([
      [1, 'retried'],
      [2, 'retried'],
      [3, 'failed'],
    ]);
    // Terminal: nothing claims it again.
    expect(await w.runOnce()).toBe(false);
    expect((await jobRow(db.pool, id)).status).toBe('failed');
  });

  it('succeeds on a later attempt once the failure goes away', async () => {
    const { id } = await client.enqueue(Flaky, { failTimes: 1 });
    const w = flakyWorker('recoverer');
    await w.runOnce();
    expect(await jobRow(db.pool, id)).toMatchObject({ status: 'ready', attempt: 1 });
    await client.retry(id);
    await w.runOnce();
    expect(await jobRow(db.pool, id)).toMatchObject({ status: 'succeeded', attempt: 2, result: { attempt: 2 } });
  });

  it('caps the backoff at the policy maximum and honours fixed and linear policies', async () => {
    const w = flakyWorker('policies');
    const exp = await client.enqueue(Flaky, { failTimes: 99 }, { maxAttempts: 10, backoff: { kind: 'exponential', baseMs: 1000, maxMs: 3000 } });
    const fixed = await client.enqueue(Flaky, { failTimes: 99 }, { maxAttempts: 10, backoff: { kind: 'fixed', baseMs: 700, maxMs: 10_000 } });
    const linear = await client.enqueue(Flaky, { failTimes: 99 }, { maxAttempts: 10, backoff: { kind: 'linear', baseMs: 500, maxMs: 10_000 } });
    const seen: Record<string, number[]> = { [exp.id]: [], [fixed.id]: [], [linear.id]: [] };
    for (let round = 0; round < 3; round++) {
      await w.runOnce();
      for (const id of Object.keys(seen)) {
        seen[id]!.push(await scheduledDelayMs(id));
        await client.retry(id);
      }
    }
    expect(seen[exp.id]).toEqual([1000, 2000, 3000]);
    expect(seen[fixed.id]).toEqual([700, 700, 700]);
    expect(seen[linear.id]).toEqual([500, 1000, 1500]);
  });

  it("persists the definition's retry policy on each job unless the enqueue overrides it", async () => {
    const fromDef = await client.enqueue(Flaky, { failTimes: 0 });
    const overridden = await client.enqueue(Flaky, { failTimes: 0 }, { maxAttempts: 7, backoff: { kind: 'fixed', baseMs: 10 } });
    const policy = async (id: string) =>
      (await db.pool.query('select max_attempts, backoff_kind, backoff_base_ms, backoff_max_ms from workhorse.jobs where id = $1', [id])).rows[0];
    expect(await policy(fromDef.id)).toEqual({ max_attempts: 3, backoff_kind: 'exponential', backoff_base_ms: 1000, backoff_max_ms: 3000 });
    // Field by field: the maxMs the override leaves out is the definition's (3000), not the library's default.
    expect(await policy(overridden.id)).toEqual({ max_attempts: 7, backoff_kind: 'fixed', backoff_base_ms: 10, backoff_max_ms: 3000 });
  });

  it("uses a worker's retryDelayMs override instead of the persisted policy", async () => {
    const { id } = await client.enqueue(Flaky, { failTimes: 99 });
    await flakyWorker('override', { retryDelayMs: 250 }).runOnce();
    expect(await scheduledDelayMs(id)).toBe(250);
  });

  it('refuses a retryDelayMs the database cannot store (over 2^31-1 ms) when the worker is built', () => {
    expect(() => new Worker(client, { retryDelayMs: 2_147_483_648 })).toThrow(ConfigError);
    expect(() => new Worker(client, { retryDelayMs: 2_147_483_648 })).toThrow(/retryDelayMs/);
    expect(() => new Worker(client, { retryDelayMs: 2_147_483_647 })).not.toThrow();
  });

  it('asks a retryDelayMs function only when a retry follows: not for a permanent error, nor for the last attempt', async () => {
    const asked: number[] = [];
    const retryDelayMs = (attempt: number) => {
      asked.push(attempt);
      return 0;
    };
    const permanent = await client.enqueue(Flaky, { failTimes: -1 });
    await flakyWorker('asked-permanent', { retryDelayMs }).runOnce();
    expect(await jobRow(db.pool, permanent.id)).toMatchObject({ status: 'failed' });
    expect(asked).toEqual([]);

    const last = await client.enqueue(Flaky, { failTimes: 99 }, { maxAttempts: 2 });
    const w = flakyWorker('asked-last', { retryDelayMs });
    await w.runOnce();
    await w.runOnce();
    expect(await jobRow(db.pool, last.id)).toMatchObject({ status: 'failed', attempt: 2 });
    expect(asked).toEqual([1]);
  });

  it.each([
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['a delay over 2^31-1 ms', 1e12],
  ])('retries on the job\'s own backoff, and reports it, when a retryDelayMs function answers %s', async (_, answer) => {
    const { id } = await client.enqueue(Flaky, { failTimes: 99 });
    const w = flakyWorker('bad-override', { retryDelayMs: () => answer });
    const errors: unknown[] = [];
    w.events.on('error', (e) => errors.push(e));
    await w.runOnce();
    expect(await jobRow(db.pool, id)).toMatchObject({ status: 'ready', attempt: 1 });
    expect(await scheduledDelayMs(id)).toBe(1000);
    expect(errors.map((e) => String(e))).toEqual([expect.stringMatching(/retryDelayMs/)]);
  });

  it('ends a job `failed` at once on a PermanentJobError, whatever attempts remain', async () => {
    const { id } = await client.enqueue(Flaky, { failTimes: -1 });
    await flakyWorker('permanent').runOnce();
    expect(await jobRow(db.pool, id)).toMatchObject({ status: 'failed', attempt: 1, max_attempts: 3 });
    // A WorkhorseError like every error workhorse defines: its code is recorded with it.
    expect((await jobRow(db.pool, id)).last_error).toMatchObject({ name: 'PermanentJobError', code: 'permanent_failure', message: 'this will never work' });
    expect(new PermanentJobError('x')).toBeInstanceOf(WorkhorseError);
    expect((await attemptsOf(db.pool, id)).map((a) => a.outcome)).toEqual(['failed']);
  });
});

// Foundation (6c): dedupe keys, priority and run_at ordering. A second
// enqueue with the same dedupe key returns the first job; workers claim in
// (priority, run_at, id) order, lower priority first; a job is not claimed
// before its run_at.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { ValidationError } from '../../src/errors.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { countJobs, jobRow } from './support/rows.js';

const Note = defineJob({ type: 'fx.note', schema: z.object({ label: z.string() }) });

let db: TestDatabase;
let client: Client;
const workers: Worker[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Note], poolMax: 10 });
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

/** A one-at-a-time worker that logs the order it runs jobs in. */
function orderedWorker(order: string[]): Worker {
  const w = new Worker(client, { workerId: `ordered-${workers.length}`, concurrency: 1, listen: false, heartbeatMs: 60_000 });
  w.handle(Note, (p) => void order.push(p.label));
  workers.push(w);
  return w;
}

async function drain(w: Worker): Promise<void> {
  while (await w.runOnce());
}

describe('dedupe_key', () => {
  it('returns the first job for a second enqueue with the same dedupe key and writes one row', async () => {
    const first = await client.enqueue(Note, { label: 'first' }, { dedupeKey: 'invoice:42' });
    const second = await client.enqueue(Note, { label: 'second' }, { dedupeKey: 'invoice:42' });
    expect(first.created).toBe(true);
    expect(second).toEqual({ id: first.id, created: false });
    expect(await countJobs(db.pool)).toBe(1);
    expect(await jobRow(db.pool, first.id)).toMatchObject({ status: 'ready' });
    expect((await client.getJob(first.id))!.payload).toEqual({ label: 'first' });
  });

  it('creates exactly one job when many enqueues with one dedupe key race', async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => client.enqueue(Note, { label: `racer-${i}` }, { dedupeKey: 'race' })),
    );
    expect(new Set(results.map((r) => r.id)).size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(await countJobs(db.pool)).toBe(1);
  });

  it('dedupes within one enqueueMany batch and against existing rows, in input order', async () => {
    const existing = await client.enqueue(Note, { label: 'existing' }, { dedupeKey: 'k1' });
    const res = await client.enqueueMany([
      { job: Note, payload: { label: 'a' }, options: { dedupeKey: 'k1' } },
      { job: Note, payload: { label: 'b' }, options: { dedupeKey: 'k2' } },
      { job: Note, payload: { label: 'c' } },
    ]);
    expect(res[0]).toEqual({ id: existing.id, created: false });
    expect(res[1]!.created).toBe(true);
    expect(res[2]!.created).toBe(true);
    expect(await countJobs(db.pool)).toBe(3);
  });

  it('refuses a dedupe key in the slot: prefix that schedules key their cadences with (a job holding one took a cadence\'s place), writing nothing', async () => {
    const err = await client.enqueue(Note, { label: 'x' }, { dedupeKey: 'slot:nightly:2026-12-06T02:00:00.000Z' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).issues.map((i) => i.path)).toContainEqual(['dedupeKey']);
    expect(await countJobs(db.pool)).toBe(0);
    expect((await client.enqueue(Note, { label: 'y' }, { dedupeKey: 'slots:are:fine' })).created).toBe(true);
  });

  it('keeps the dedupe key after the job ends, so a finished job still dedupes', async () => {
    const first = await client.enqueue(Note, { label: 'once' }, { dedupeKey: 'once' });
    await drain(orderedWorker([]));
    expect((await jobRow(db.pool, first.id)).status).toBe('succeeded');
    expect(await client.enqueue(Note, { label: 'again' }, { dedupeKey: 'once' })).toEqual({ id: first.id, created: false });
  });
});

describe('ordering', () => {
  it('claims lower priority values first, then earlier run_at, then enqueue order', async () => {
    const past = (s: number) => new Date(Date.now() - s * 1000);
    await client.enqueue(Note, { label: 'p0-late' }, { priority: 0, runAt: past(10) });
    await client.enqueue(Note, { label: 'p5' }, { priority: 5 });
    await client.enqueue(Note, { label: 'p0-early' }, { priority: 0, runAt: past(60) });
    await client.enqueue(Note, { label: 'p-1' }, { priority: -1 });
    await client.enqueue(Note, { label: 'p0-late-2' }, { priority: 0, runAt: past(10) });
    const order: string[] = [];
    await drain(orderedWorker(order));
    // p0-late's run_at is earlier than or equal to p0-late-2's; equal ones go by id.
    expect(order).toEqual(['p-1', 'p0-early', 'p0-late', 'p0-late-2', 'p5']);
  });

  it('breaks ties by enqueue order for equal priority and run_at', async () => {
    const runAt = new Date(Date.now() - 1000);
    await client.enqueueMany(['a', 'b', 'c', 'd'].map((label) => ({ job: Note, payload: { label }, options: { runAt } })));
    const order: string[] = [];
    await drain(orderedWorker(order));
    expect(order).toEqual(['a', 'b', 'c', 'd']);
  });

  it('does not claim a job before its run_at, and claims it once due', async () => {
    const later = await client.enqueue(Note, { label: 'later' }, { delayMs: 60_000 });
    const future = await client.enqueue(Note, { label: 'future' }, { runAt: new Date(Date.now() + 60_000) });
    const now = await client.enqueue(Note, { label: 'now' });
    const order: string[] = [];
    const w = orderedWorker(order);
    await drain(w);
    expect(order).toEqual(['now']);
    expect((await jobRow(db.pool, later.id)).status).toBe('ready');
    expect((await jobRow(db.pool, future.id)).status).toBe('ready');
    expect((await jobRow(db.pool, now.id)).status).toBe('succeeded');
    // The delay was measured on the database clock.
    const r = await db.pool.query<{ ms: number }>(
      `select (extract(epoch from run_at - created_at) * 1000)::int as ms from workhorse.jobs where id = $1`,
      [later.id],
    );
    expect(r.rows[0]!.ms).toBe(60_000);

    // Once due (moved into the past here), it runs.
    await db.pool.query(`update workhorse.jobs set run_at = now() - interval '1 second' where id = $1`, [later.id]);
    await drain(w);
    expect(order).toEqual(['now', 'later']);
    expect((await jobRow(db.pool, future.id)).status).toBe('ready');
  });
});

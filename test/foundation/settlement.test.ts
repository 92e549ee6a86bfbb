// Settlement and claim batching: results travel as JSON array literals, a
// result JSON cannot hold fails only its own job, a batch write that hits a
// connection error is written again as a whole, and a busy worker with a
// claim buffer claims in batches of at least its prefetch.
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, defineJob, Worker, type Client } from '../../src/index.js';
import { integerArrayLiteral, textArrayLiteral } from '../../src/db/arrayLiteral.js';
import * as protocol from '../../src/db/protocol.js';
import { Settler, type SettleCallback } from '../../src/worker/settler.js';
import { createTestDatabase, registerWorkerRow, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Echo = defineJob({
  type: 'settle.echo',
  schema: z.object({ value: z.string() }),
  retry: { maxAttempts: 3, backoff: { kind: 'fixed', baseMs: 0, maxMs: 0 } },
});
const Flaky = defineJob({ type: 'settle.flaky', schema: z.object({ fail: z.boolean() }) });
const Many = defineJob({ type: 'settle.many', queue: 'many', schema: z.object({ i: z.number().int() }) });

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Echo, Flaky, Many], poolMax: 4 });
});

afterAll(async () => {
  await client.close();
  await db.drop();
});

async function runUntilSettled(worker: Worker, ids: string[]) {
  const run = worker.run();
  const jobs = await waitFor(
    () => Promise.all(ids.map((id) => client.getJob(id))),
    (js) => js.every((j) => j!.status === 'succeeded' || j!.status === 'failed'),
    { what: 'every job to settle' },
  );
  await worker.stop();
  await run;
  return jobs.map((j) => j!);
}

describe('array literals', () => {
  it('round-trips ids and awkward JSON documents through PostgreSQL unchanged', async () => {
    const docs = ['null', '"quote \\" and backslash \\\\"', '{"a":"{x,y}","b":[1,2]}', '"tab\\t é 😀"', null];
    const r = await client.pool.query<{ ids: string[]; docs: unknown[] }>('select $1::bigint[] as ids, $2::jsonb[] as docs', [
      integerArrayLiteral(['1', '9007199254740993', 3]),
      textArrayLiteral(docs),
    ]);
    expect(r.rows[0]!.ids).toEqual(['1', '9007199254740993', '3']);
    expect(r.rows[0]!.docs).toEqual(docs.map((d) => (d === null ? null : JSON.parse(d))));
  });

  it('refuses an id that is not an integer instead of sending it', () => {
    expect(() => integerArrayLiteral(['1', '2}'])).toThrow(TypeError);
  });
});

describe('settlement', () => {
  it('stores each result exactly as returned, quotes and braces included', async () => {
    const values = ['plain', 'has "quotes" and \\ backslashes', '{not,an,array}', 'ünïcödé'];
    const ids = (await client.enqueueMany(values.map((value) => ({ job: Echo, payload: { value } })))).map((r) => r.id);
    const worker = new Worker(client, { concurrency: 4, pollMs: 50 }).handle(Echo, (p) => ({ echoed: p.value }));
    const jobs = await runUntilSettled(worker, ids);
    expect(jobs.map((j) => j.result)).toEqual(values.map((v) => ({ echoed: v })));
  });

  it('fails only the job whose result JSON cannot hold, at once, and settles the rest of its batch', async () => {
    const ids = (await client.enqueueMany(['a', 'bigint', 'c'].map((value) => ({ job: Echo, payload: { value } })))).map((r) => r.id);
    const worker = new Worker(client, { concurrency: 3, pollMs: 50 }).handle(Echo, (p) => (p.value === 'bigint' ? { n: 1n } : p.value));
    const jobs = await runUntilSettled(worker, ids);
    expect(jobs.map((j) => j.status)).toEqual(['succeeded', 'failed', 'succeeded']);
    expect(jobs[1]!.attempt).toBe(1);
    expect(jobs[1]!.lastError).toMatchObject({ name: 'ValidationError' });
    expect((jobs[1]!.lastError as { message: string }).message).toMatch(/not JSON/);
    expect(jobs[0]!.result).toBe('a');
  });

  it('keeps settling and stops cleanly when a settled listener or a retryDelayMs function throws', async () => {
    const ids = (await client.enqueueMany([true, false, true].map((fail) => ({ job: Flaky, payload: { fail } })))).map((r) => r.id);
    const errors: unknown[] = [];
    const worker = new Worker(client, {
      concurrency: 3,
      pollMs: 50,
      retryDelayMs: () => {
        throw new Error('retryDelayMs bug');
      },
    }).handle(Flaky, (p) => {
      if (p.fail) throw new Error('handler failed');
      return 'ok';
    });
    worker.events.on('settled', () => {
      throw new Error('listener bug');
    });
    worker.events.on('error', (err) => errors.push(err));
    const run = worker.run();
    const jobs = await waitFor(
      () => Promise.all(ids.map((id) => client.getJob(id))),
      (js) => js[1]!.status === 'succeeded' && js[0]!.attempt >= 1 && js[2]!.attempt >= 1 && js[0]!.status !== 'running',
      { what: 'the jobs to settle' },
    );
    await worker.stop();
    await run;
    expect(jobs[1]!.result).toBe('ok');
    expect((jobs[0]!.lastError as { message: string }).message).toBe('handler failed');
    expect(worker.runtimeState().activeJobIds).toEqual([]);
    const messages = errors.map((e) => (e as Error).message);
    expect(messages).toContain('listener bug');
    expect(messages).toContain('retryDelayMs bug');
  });

  it('writes a batch again after a connection error and reports every member once', async () => {
    const ids = (await client.enqueueMany(['x', 'y'].map((value) => ({ job: Echo, payload: { value } })))).map((r) => r.id);
    await registerWorkerRow(client.pool, client.namespace, 'settle-retry');
    const claimed = await protocol.claimMany(client.pool, client.namespace, {
      workerId: 'settle-retry',
      queues: ['default'],
      types: ['settle.echo'],
      limit: 2,
      leaseMs: 60_000,
    });
    expect(claimed.map((j) => j.id).sort()).toEqual([...ids].sort());
    // The first completion starts a write at once (batch [x]); it fails and
    // is written again; [y], queued meanwhile, follows as the next batch.
    const writes: string[] = [];
    const flaky = {
      query: (text: string, values?: unknown[]) => {
        writes.push(String(values?.[1]));
        if (writes.length === 1) return Promise.reject(Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' }));
        return client.pool.query(text, values);
      },
    };
    const settler = new Settler(flaky as unknown as protocol.Queryable, client.namespace);
    const outcomes = await Promise.all(
      claimed.map(
        (j) =>
          new Promise<Parameters<SettleCallback>>((resolve) =>
            settler.complete({ id: j.id, execution: j.execution, resultJson: JSON.stringify(j.id) }, (...a) => resolve(a)),
          ),
      ),
    );
    expect(writes).toEqual([`{${claimed[0]!.id}}`, `{${claimed[0]!.id}}`, `{${claimed[1]!.id}}`]);
    expect(outcomes).toEqual(claimed.map(() => [{ accepted: true, status: 'succeeded' }]));
    const jobs = await Promise.all(ids.map((id) => client.getJob(id)));
    expect(jobs.map((j) => j!.status)).toEqual(['succeeded', 'succeeded']);
  });

  it('reports succeeded, not stale, a completion whose first try committed with its answer lost (the retry meets the fence)', async () => {
    const enqueued = await client.enqueueMany([{ job: Echo, payload: { value: 'lost-1' } }, { job: Echo, payload: { value: 'lost-2' } }]);
    await registerWorkerRow(client.pool, client.namespace, 'settle-lost');
    const claimed = await protocol.claimMany(client.pool, client.namespace, {
      workerId: 'settle-lost',
      queues: ['default'],
      types: ['settle.echo'],
      limit: 2,
      leaseMs: 60_000,
    });
    expect(claimed).toHaveLength(2);
    // The first completion's statement runs and commits; its connection "breaks" before the answer arrives.
    let calls = 0;
    const lossy = {
      query: async (text: string, values?: unknown[]) => {
        const r = await client.pool.query(text, values);
        if (++calls === 1) throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
        return r;
      },
    };
    const settler = new Settler(lossy as unknown as protocol.Queryable, client.namespace);
    const [first] = claimed;
    const outcome = await new Promise<Parameters<SettleCallback>>((resolve) =>
      settler.complete({ id: first!.id, execution: first!.execution, resultJson: '"kept"' }, (...a) => resolve(a)),
    );
    expect(outcome).toEqual([{ accepted: true, status: 'succeeded' }]);
    expect(await client.getJob(first!.id)).toMatchObject({ status: 'succeeded', result: 'kept' });
    // A completion the fence refuses for real (its lease was taken from it) is still stale after a retry.
    const second = claimed[1]!;
    await client.pool.query('delete from workhorse.job_runtime where job_id = $1', [second.id]);
    calls = 0;
    const refused = await new Promise<Parameters<SettleCallback>>((resolve) =>
      settler.complete({ id: second.id, execution: second.execution, resultJson: '"lost"' }, (...a) => resolve(a)),
    );
    expect(refused).toEqual([{ accepted: false }]);
    await client.pool.query('delete from workhorse.jobs where id = $1', [second.id]);
    // A failure too: the retry it committed is what the attempts ledger holds for this execution.
    const [third] = await client.enqueueMany([{ job: Echo, payload: { value: 'lost-3' } }]);
    const [claimedThird] = await protocol.claimMany(client.pool, client.namespace, {
      workerId: 'settle-lost',
      queues: ['default'],
      types: ['settle.echo'],
      limit: 1,
      leaseMs: 60_000,
    });
    expect(claimedThird!.id).toBe(third!.id);
    calls = 0;
    const failed = await new Promise<Parameters<SettleCallback>>((resolve) =>
      settler.fail(
        { id: claimedThird!.id, execution: claimedThird!.execution, error: { name: 'Error', message: 'boom' }, retryDelayMs: 60_000, final: false },
        (...a) => resolve(a),
      ),
    );
    expect(failed).toEqual([{ accepted: true, status: 'ready' }]);
    expect(await client.getJob(claimedThird!.id)).toMatchObject({ status: 'ready', attempt: 1, lastError: { message: 'boom' } });
    // Out of the next tests' way: they claim what is ready.
    await client.pool.query('delete from workhorse.jobs where id = any($1::bigint[])', [[...enqueued, third!].map((j) => j.id)]);
  });

  it('gives every member the error when the write keeps failing, and writes nothing', async () => {
    const { id } = await client.enqueue(Echo, { value: 'down' });
    await registerWorkerRow(client.pool, client.namespace, 'settle-down');
    const [job] = await protocol.claimMany(client.pool, client.namespace, {
      workerId: 'settle-down',
      queues: ['default'],
      types: ['settle.echo'],
      limit: 1,
      leaseMs: 60_000,
    });
    expect(job!.id).toBe(id);
    const down = { query: () => Promise.reject(new Error('database is down')) };
    const settler = new Settler(down as unknown as protocol.Queryable, client.namespace);
    const [outcome, error] = await new Promise<Parameters<SettleCallback>>((resolve) =>
      settler.complete({ id: job!.id, execution: job!.execution, resultJson: 'null' }, (...a) => resolve(a)),
    );
    expect(outcome).toBeUndefined();
    expect((error as Error).message).toBe('database is down');
    expect((await client.getJob(id))!.status).toBe('running');
  });
});

describe('claim batching', () => {
  it('claims in batches of at least its prefetch while the queue holds that many', async () => {
    const total = 1_000;
    await client.enqueueMany(Array.from({ length: total }, (_, i) => ({ job: Many, payload: { i } })));
    const sizes: number[] = [];
    let settled = 0;
    // A long safety poll: no poll-driven claims, only the batching rule decides.
    const worker = new Worker(client, { queue: 'many', concurrency: 4, prefetch: 96, pollMs: 10_000 });
    worker.handle(Many, () => undefined);
    worker.events.on('claimed', (jobs) => sizes.push(jobs.length));
    worker.events.on('settled', () => settled++);
    const run = worker.run();
    await waitFor(
      async () => settled,
      (n) => n === total,
      { what: 'every job to settle' },
    );
    await worker.stop();
    await run;
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(total);
    // Every claim but the last, which takes what is left, is a full buffer's worth.
    expect(sizes.slice(0, -1).every((n) => n >= 96)).toBe(true);
    expect(sizes.length).toBeLessThanOrEqual(Math.ceil(total / 96));
  });
});

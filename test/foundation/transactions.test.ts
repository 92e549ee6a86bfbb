// Transactions and durable steps: enqueue inside the caller's own pg
// transaction commits or rolls back with it; a transactional step's writes
// and its checkpoint commit together; a recorded step never runs again on a
// retried job; a handler bound to a definition gets its parsed payload.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { ValidationError } from '../../src/errors.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { attemptsOf, countJobs, jobRow } from './support/rows.js';

const Transfer = defineJob({
  type: 'fx.transfer',
  schema: z.object({ cents: z.number().int(), failAfterStep: z.boolean().default(false), failInStep: z.boolean().default(false) }),
  retry: { maxAttempts: 3, backoff: { kind: 'fixed', baseMs: 0, maxMs: 0 } },
});
const Remind = defineJob({
  type: 'fx.remind',
  schema: z.object({ at: z.string().transform((s) => new Date(s)), tag: z.string().default('none') }),
});

let db: TestDatabase;
let client: Client;
const workers: Worker[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query('create table fx_ledger (job_id bigint, cents integer)');
  client = createClient({ connectionString: db.url, jobs: [Transfer, Remind], poolMax: 6 });
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

function worker(id: string): Worker {
  const w = new Worker(client, { workerId: id, listen: false, heartbeatMs: 60_000 });
  workers.push(w);
  return w;
}

describe("enqueue inside the caller's transaction", () => {
  it('writes nothing when the transaction rolls back', async () => {
    const tx = await client.pool.connect();
    try {
      await tx.query('begin');
      await tx.query(`insert into fx_ledger values (0, 1)`);
      const { id } = await client.enqueue(Transfer, { cents: 1 }, { tx });
      // Visible inside the transaction, invisible outside it.
      expect((await tx.query('select count(*)::int as n from workhorse.jobs where id = $1', [id])).rows[0].n).toBe(1);
      expect(await countJobs(db.pool, 'id = $1', [id])).toBe(0);
      await tx.query('rollback');
    } finally {
      tx.release();
    }
    expect(await countJobs(db.pool)).toBe(0);
    expect((await db.pool.query('select * from fx_ledger')).rows).toEqual([]);
  });

  it('makes the job visible when the transaction commits', async () => {
    const tx = await client.pool.connect();
    let id: string;
    try {
      await tx.query('begin');
      ({ id } = await client.enqueue(Transfer, { cents: 2 }, { tx }));
      await tx.query('commit');
    } finally {
      tx.release();
    }
    expect((await jobRow(db.pool, id)).status).toBe('ready');
    await db.pool.query('truncate workhorse.jobs');
  });
});

describe('durable steps', () => {
  function transferWorker(id: string, counters: { step: number; tx: number }): Worker {
    return worker(id).handle(Transfer, async (p, ctx) => {
      const quote = await ctx.step('quote', () => {
        counters.step++;
        return { rate: 1.5, attempt: ctx.job.attempt };
      });
      const booked = await ctx.txStep('book', async (tx) => {
        counters.tx++;
        await tx.query('insert into fx_ledger values ($1, $2)', [ctx.job.id, p.cents]);
        if (p.failInStep) throw new Error('failed inside the transactional step');
        return { booked: p.cents };
      });
      if (p.failAfterStep && ctx.job.attempt === 1) throw new Error('crash after the step');
      return { quote, booked };
    });
  }

  it('runs a recorded step and transactional step once; a retried job replays their results', async () => {
    const { id } = await client.enqueue(Transfer, { cents: 500, failAfterStep: true });
    const counters = { step: 0, tx: 0 };
    const w = transferWorker('steps-1', counters);
    await w.runOnce();
    expect(await jobRow(db.pool, id)).toMatchObject({ status: 'ready', attempt: 1 });
    await w.runOnce();

    const done = await jobRow(db.pool, id);
    expect(done).toMatchObject({ status: 'succeeded', attempt: 2 });
    // The replayed step returns what attempt 1 recorded.
    expect(done.result).toEqual({ quote: { rate: 1.5, attempt: 1 }, booked: { booked: 500 } });
    expect(counters).toEqual({ step: 1, tx: 1 });
    expect((await db.pool.query('select cents from fx_ledger where job_id = $1', [id])).rows).toEqual([{ cents: 500 }]);
    const steps = await db.pool.query('select name, execution::int as execution from workhorse.job_steps where job_id = $1 order by name', [id]);
    expect(steps.rows).toEqual([
      { name: 'book', execution: 1 },
      { name: 'quote', execution: 1 },
    ]);
    expect((await attemptsOf(db.pool, id)).map((a) => a.outcome)).toEqual(['retried', 'succeeded']);
  });

  it('hands back the recorded JSON on the first run as on a replay, for a step and a transactional step alike', async () => {
    const { id } = await client.enqueue(Transfer, { cents: 1 });
    const seen: { attempt: number; step: unknown; tx: unknown }[] = [];
    const value = () => ({ at: new Date(0), missing: undefined, n: 1 });
    const w = worker('steps-json').handle(Transfer, async (_p, ctx) => {
      const step = await ctx.step('value', value);
      const tx = await ctx.txStep('txValue', async () => value());
      seen.push({ attempt: ctx.job.attempt, step, tx });
      if (ctx.job.attempt === 1) throw new Error('retry, to replay both');
      return null;
    });
    await w.runOnce();
    await w.runOnce();
    expect(await jobRow(db.pool, id)).toMatchObject({ status: 'succeeded', attempt: 2 });
    // A Date is its ISO string and an undefined field is gone, on both runs: code that works on the first run works on a replay.
    const recorded = { at: '1970-01-01T00:00:00.000Z', n: 1 };
    expect(seen).toEqual([
      { attempt: 1, step: recorded, tx: recorded },
      { attempt: 2, step: recorded, tx: recorded },
    ]);
  });

  it("rolls back a transactional step's writes together with its checkpoint when it throws", async () => {
    const { id } = await client.enqueue(Transfer, { cents: 700, failInStep: true }, { maxAttempts: 1 });
    const counters = { step: 0, tx: 0 };
    await transferWorker('steps-2', counters).runOnce();
    expect(await jobRow(db.pool, id)).toMatchObject({ status: 'failed' });
    expect(counters.tx).toBe(1);
    expect((await db.pool.query('select * from fx_ledger where job_id = $1', [id])).rows).toEqual([]);
    const steps = await db.pool.query('select name from workhorse.job_steps where job_id = $1', [id]);
    expect(steps.rows).toEqual([{ name: 'quote' }]);
  });
});

describe('handlers bound to a definition', () => {
  it("hands the handler the payload parsed by the definition's schema", async () => {
    const at = '2030-01-02T03:04:05.000Z';
    const { id } = await client.enqueue(Remind, { at });
    let received: unknown;
    await worker('parse-1')
      .handle(Remind, (p) => {
        received = p;
        return { isDate: p.at instanceof Date, iso: p.at.toISOString(), tag: p.tag };
      })
      .runOnce();
    expect(received).toEqual({ at: new Date(at), tag: 'none' });
    expect((await jobRow(db.pool, id)).result).toEqual({ isDate: true, iso: at, tag: 'none' });
  });

  it('fails a job whose stored payload no longer matches the schema at once, with a ValidationError', async () => {
    const { id } = await client.enqueue(Remind, { at: '2030-01-01T00:00:00Z' });
    await db.pool.query(`update workhorse.jobs set payload = '{"at": 42}' where id = $1`, [id]);
    let ran = false;
    const w = worker('parse-2').handle(Remind, () => void (ran = true));
    const settled = new Promise<{ status: string; error?: unknown }>((r) => w.events.once('settled', r));
    await w.runOnce();
    expect(ran).toBe(false);
    const outcome = await settled;
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toBeInstanceOf(ValidationError);
    const job = await jobRow(db.pool, id);
    expect(job).toMatchObject({ status: 'failed', attempt: 1 });
    expect(job.last_error).toMatchObject({ name: 'ValidationError' });
    expect(job.last_error?.message).toContain('no longer matches');
  });
});

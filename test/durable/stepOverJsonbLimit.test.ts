// A step whose record PostgreSQL refuses for its value: a result over
// jsonb's 256 MiB (54000, "string too long to represent as jsonb string")
// was an error of no workhorse type, so the job was retried and the step's
// body ran again on every attempt, whereas a job result over the limit
// fails at once. The refusal now fails the attempt at once with a
// ValidationError that is not retried, for ctx.step and ctx.txStep alike
// (whose writes roll back). Only the record's statement is replaced by one
// refused as PostgreSQL refuses it (a result that size needs ~1 GB of
// memory); everything else runs on the real database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, Worker, type Client } from '../../src/index.js';
import { postgresProtocol, type Protocol } from '../../src/db/protocol.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const HUGE = 'a result over the jsonb limit';
const Big = defineJob({
  type: 'dx.jsonb.big',
  schema: z.object({ tx: z.boolean() }),
  retry: { maxAttempts: 3, backoff: { kind: 'fixed', baseMs: 10, maxMs: 10 } },
});

let db: TestDatabase;
let client: Client;
let worker: Worker;
let running: Promise<void>;
const bodies = new Map<string, number>();

const tooLong = () =>
  Promise.reject(Object.assign(new Error('string too long to represent as jsonb string'), { code: '54000', severity: 'ERROR' }));

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query('create table effects (job_id bigint)');
  client = createClient({ connectionString: db.url, jobs: [Big], poolMax: 4 });
  const protocol: Protocol = {
    ...postgresProtocol,
    recordStep: (q, ns, lease, name, result) => (result === HUGE ? tooLong() : postgresProtocol.recordStep(q, ns, lease, name, result)),
    recordTxStep: (q, ns, lease, name, result, txid) => (result === HUGE ? tooLong() : postgresProtocol.recordTxStep(q, ns, lease, name, result, txid)),
  };
  Object.defineProperty(client, 'protocol', { value: protocol });
  worker = new Worker(client, { workerId: 'jsonb-limit', concurrency: 2, heartbeatMs: 500, pollMs: 100 });
  worker.handle(Big, async ({ tx }, ctx) => {
    const id = ctx.job.id;
    const body = () => void bodies.set(id, (bodies.get(id) ?? 0) + 1);
    if (!tx) return ctx.step('huge', () => (body(), HUGE));
    return ctx.txStep('huge', async (t) => {
      body();
      await t.query('insert into effects (job_id) values ($1)', [id]);
      return HUGE;
    });
  });
  running = worker.run();
});

afterAll(async () => {
  await worker?.stop();
  await running;
  await client?.close();
  await db?.drop();
});

describe('a step whose record PostgreSQL refuses for its size', () => {
  it.each([false, true])('(txStep: %s) fails the job on its first attempt with a ValidationError, its body run once', async (tx) => {
    const { id } = await client.enqueue(Big, { tx });
    const failed = await waitFor(() => client.getJob(id), (j) => j!.status === 'failed', { what: 'the job to fail', timeoutMs: 10_000 });
    expect(failed!.attempt).toBe(1);
    expect(failed!.lastError).toMatchObject({ name: 'ValidationError' });
    expect((failed!.lastError as { message: string }).message).toContain('string too long to represent as jsonb string');
    expect(bodies.get(id)).toBe(1);
    expect((await db.pool.query('select count(*)::int as n from effects where job_id = $1', [id])).rows[0].n).toBe(0);
    expect((await db.pool.query('select count(*)::int as n from workhorse.job_steps where job_id = $1', [id])).rows[0].n).toBe(0);
  });
});

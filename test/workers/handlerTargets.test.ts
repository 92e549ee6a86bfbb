// worker.handle and handleBatch take a job type name or a defineJob() value.
// A look-alike such as { type: 'report.build' } was registered: the worker
// claimed the type, and every job of it failed with "Cannot read properties
// of undefined (reading 'safeParse')" (no schema to parse the payload with),
// retried until its attempts ran out; a number registered the type
// "undefined". Both are a ValidationError when the handler is added now,
// and so is a handleBatch option other than maxBatch (a typo such as
// { max: 5 } left batches of the default 50).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, ValidationError, Worker, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Report = defineJob({ type: 'report.build', schema: z.object({ n: z.number() }), retry: { maxAttempts: 2, backoff: { kind: 'fixed', baseMs: 0, maxMs: 0 } } });

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Report], poolMax: 2 });
});
afterAll(async () => {
  await client.close();
  await db.drop();
});

describe('a handler for something that is not a job type or definition', () => {
  it('is a ValidationError from handle and handleBatch, and registers nothing', () => {
    const worker = new Worker(client, {});
    for (const job of [{ type: 'report.build' }, 5, null]) {
      expect(() => worker.handle(job as never, async () => 1), String(job)).toThrow(ValidationError);
      expect(() => worker.handleBatch(job as never, async (ps) => ps), String(job)).toThrow(/a handler is for a job type name or a defineJob\(\) definition/);
    }
    // Nothing was registered under report.build by the look-alike.
    expect(() => worker.handle(Report, async () => 1)).not.toThrow();
  });

  it('refuses handleBatch options it does not take, so a typo cannot leave the default batch size in force', () => {
    const worker = new Worker(client, {});
    expect(() => worker.handleBatch(Report, async (ps) => ps, { max: 5 } as never)).toThrow(/invalid handleBatch for "report.build": options: Unrecognized key: "max"/);
    expect(() => worker.handleBatch(Report, async (ps) => ps, { maxBatch: 5 })).not.toThrow();
  });

  it('leaves a definition and a type name working', async () => {
    const worker = new Worker(client, { pollMs: 50 }).handle(Report, async ({ n }) => n * 2);
    const { id } = await client.enqueue(Report, { n: 21 });
    const run = worker.run();
    const job = await waitFor(() => client.getJob(id), (j) => j?.status === 'succeeded', { what: 'the job to succeed' });
    await worker.stop();
    await run;
    expect(job!.result).toBe(42);
    expect(() => new Worker(client, {}).handle('report.build', async () => 1)).not.toThrow();
  });
});

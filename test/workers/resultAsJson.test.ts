// A handler's result is stored as JSON.stringify writes it, as api.md now
// says (it said results followed "the payload rules", and a payload with NaN
// is refused): NaN, Infinity and an invalid Date become null, a Date its ISO
// string, an undefined field is dropped, and the job succeeds. A function
// is not JSON and fails the job at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, Worker, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Result = defineJob({ type: 'result.json', schema: z.object({ k: z.enum(['numbers', 'function']) }), retry: { maxAttempts: 3, backoff: { kind: 'fixed', baseMs: 0, maxMs: 0 } } });

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Result], poolMax: 2 });
});
afterAll(async () => {
  await client.close();
  await db.drop();
});

describe('a handler result', () => {
  it('is stored as JSON writes it; a function fails the job at once', async () => {
    const worker = new Worker(client, { pollMs: 50 }).handle(Result, async ({ k }) =>
      k === 'numbers' ? { nan: Number.NaN, inf: -Infinity, bad: new Date(Number.NaN), when: new Date(0), gone: undefined, ok: 1 } : () => 1,
    );
    const [numbers, fn] = await client.enqueueMany([
      { job: Result, payload: { k: 'numbers' } },
      { job: Result, payload: { k: 'function' } },
    ]);
    const run = worker.run();
    const jobs = await waitFor(
      () => Promise.all([client.getJob(numbers!.id), client.getJob(fn!.id)]),
      (js) => js.every((j) => j!.status === 'succeeded' || j!.status === 'failed'),
      { what: 'both jobs to settle' },
    );
    await worker.stop();
    await run;
    expect(jobs[0]).toMatchObject({ status: 'succeeded', result: { nan: null, inf: null, bad: null, when: '1970-01-01T00:00:00.000Z', ok: 1 } });
    expect(jobs[0]!.result).not.toHaveProperty('gone');
    expect(jobs[1]).toMatchObject({ status: 'failed', attempt: 1, lastError: { name: 'ValidationError' } });
  });
});

// A step is keyed by (job id, name) in a b-tree. A name too long for an
// index row (12,000 characters of random hex) passed the name check, its
// body ran, and recording it failed with PostgreSQL's raw "index row
// requires 12024 bytes, maximum size is 8191"; the job was retried and the
// body ran again on every attempt. Names are at most 2,600 bytes of UTF-8
// now, refused before the body runs, without a retry; the longest runs. A
// body that is not a function is refused the same way (it failed with a
// TypeError and was retried on every attempt).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, Worker, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const LONG = randomBytes(6000).toString('hex');
const LONGEST = randomBytes(1300).toString('hex'); // 2,600 bytes
const Steps = defineJob({
  type: 'stepname.length',
  schema: z.object({ k: z.enum(['step', 'txStep', 'longest', 'notFn', 'txNotFn']) }),
  retry: { maxAttempts: 3, backoff: { kind: 'fixed', baseMs: 0, maxMs: 0 } },
});

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Steps], poolMax: 4 });
});
afterAll(async () => {
  await client.close();
  await db.drop();
});

describe('a step name too long to key its record', () => {
  it('fails the job at once with a ValidationError before the body runs; 2,600 bytes still run', async () => {
    const bodies: string[] = [];
    const worker = new Worker(client, { concurrency: 3, pollMs: 50 }).handle(Steps, async ({ k }, ctx) => {
      if (k === 'txStep') return ctx.txStep(LONG, async () => bodies.push(k));
      return ctx.step(k === 'step' ? LONG : LONGEST, () => bodies.push(k));
    });
    const ids = (await client.enqueueMany((['step', 'txStep', 'longest'] as const).map((k) => ({ job: Steps, payload: { k } })))).map((r) => r.id);
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
      ['succeeded', 1],
    ]);
    for (const j of jobs.slice(0, 2)) {
      expect(j!.lastError).toMatchObject({ name: 'ValidationError' });
      expect((j!.lastError as { message: string }).message).toMatch(/a step name is at most 2600 bytes of UTF-8/);
    }
    expect(bodies).toEqual(['longest']);
  });

  it('a body that is not a function fails the job at once with a ValidationError', async () => {
    const worker = new Worker(client, { concurrency: 2, pollMs: 50 }).handle(Steps, async ({ k }, ctx) => {
      if (k === 'txNotFn') return ctx.txStep('s', 5 as never);
      return ctx.step('s', 5 as never);
    });
    const ids = (await client.enqueueMany((['notFn', 'txNotFn'] as const).map((k) => ({ job: Steps, payload: { k } })))).map((r) => r.id);
    const run = worker.run();
    try {
      const jobs = await waitFor(
        () => Promise.all(ids.map((id) => client.getJob(id))),
        (js) => js.every((j) => j!.status === 'succeeded' || j!.status === 'failed'),
        { what: 'both jobs to settle' },
      );
      expect(jobs.map((j) => [j!.status, j!.attempt])).toEqual([
        ['failed', 1],
        ['failed', 1],
      ]);
      expect(jobs.map((j) => (j!.lastError as { message: string }).message)).toEqual([
        expect.stringContaining('step "s": its body must be a function (got number)'),
        expect.stringContaining('transactional step "s": its body must be a function (got number)'),
      ]);
    } finally {
      await worker.stop();
      await run;
    }
  });
});

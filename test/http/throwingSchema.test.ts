// A payload whose schema's own code throws (a refine, a preprocess) is an
// issue of that payload like any other: POST /jobs names it at its path in
// the body (`jobs.1.payload`), so a batch says which item, and the other
// items are still checked. It was refused at path [] with no item named.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineApp } from '../../src/app/defineApp.js';
import { defineJob } from '../../src/client/defineJob.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { SendEmail } from './fixtures/app.js';
import { buildHttp, countJobs, withToken, type ErrorJson, type HttpHarness } from './helpers.js';

const Throwing = defineJob({
  type: 'throwing',
  schema: z.object({ n: z.number() }).refine(() => {
    throw new Error('refine boom');
  }),
});
const app = defineApp({ jobs: [SendEmail, Throwing], configure: () => undefined });

let db: TestDatabase;
let h: HttpHarness;

beforeAll(async () => {
  db = await createTestDatabase();
  h = buildHttp(db, { app });
});

afterAll(async () => {
  await h?.client.close();
  await db?.drop();
});

beforeEach(async () => {
  await db.pool.query('truncate workhorse.jobs cascade');
});

async function refusal(body: unknown): Promise<ErrorJson['error']> {
  const res = await withToken(h.app, 'POST', '/jobs', body);
  expect(res.status).toBe(400);
  return ((await res.json()) as ErrorJson).error;
}

describe('POST /jobs with a schema that throws', () => {
  it('names the payload of a single job', async () => {
    const e = await refusal({ type: 'throwing', payload: { n: 1 } });
    expect(e.code).toBe('validation_failed');
    expect(e.issues!.map((i) => i.path)).toEqual([['payload']]);
    expect(e.message).toMatch(/^invalid payload: payload: reading it threw \(Error: refine boom\)/);
    expect(await countJobs(db)).toBe(0);
  });

  it('names the batch item, and still checks the items after it', async () => {
    const email = { type: 'email.send', payload: { to: 'ada@example.com', subject: 'hi' } };
    const e = await refusal({ jobs: [email, { type: 'throwing', payload: { n: 1 } }, { type: 'email.send', payload: { to: 'nope', subject: 'hi' } }] });
    expect(e.issues!.map((i) => i.path)).toEqual([
      ['jobs', 1, 'payload'],
      ['jobs', 2, 'payload', 'to'],
    ]);
    expect(e.message).toMatch(/jobs\.1\.payload: reading it threw \(Error: refine boom\)/);
    expect(await countJobs(db)).toBe(0);
  });
});

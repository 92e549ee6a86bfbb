// A request the database refuses for a reason only its operator can end (an
// id sequence at its maximum, a workhorse function dropped, a full disk, the
// login's grants revoked) answers 503 `database_needs_operator` with what to
// do, and logs it once, one line. An exhausted sequence (SQLSTATE 2200H, a
// data exception) read as 400 validation_failed, blaming the caller's
// values; a dropped function was a bare 500.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { buildHttp, countJobs, withToken, type ErrorJson, type HttpHarness } from './helpers.js';

let db: TestDatabase;
let h: HttpHarness;
const logged: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  h = buildHttp(db, { log: (m, err) => logged.push(`${m} ${String(err)}`) });
});

afterAll(async () => {
  await h.client.close();
  await db.drop();
});

const email = { type: 'email.send', payload: { to: 'ada@example.com', subject: 'hi' } };

async function refusal(res: Response): Promise<ErrorJson['error']> {
  const text = await res.text();
  expect(res.status, text).toBe(503);
  return (JSON.parse(text) as ErrorJson).error;
}

describe('a refusal only the database operator can end', () => {
  it('an exhausted job id sequence: 503 database_needs_operator saying so, not 400 blaming the values', async () => {
    await db.pool.query("select setval('workhorse.jobs_id_seq', 9223372036854775807)");
    try {
      logged.length = 0;
      const e = await refusal(await withToken(h.app, 'POST', '/jobs', email));
      expect(e.code).toBe('database_needs_operator');
      expect(e.message).toMatch(/id sequence reached its maximum value/);
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatch(/^\[workhorse http\] POST \/jobs: the database refused the request: .*2200H/);
      expect(await countJobs(db)).toBe(0);
    } finally {
      await db.pool.query("select setval('workhorse.jobs_id_seq', 1, false)");
    }
    expect((await withToken(h.app, 'POST', '/jobs', email)).status).toBe(201);
  });

  it('a workhorse function dropped: 503 database_needs_operator naming `workhorse migrate`, not a bare 500', async () => {
    await db.pool.query('alter function workhorse.get_job_v1(text, bigint) rename to get_job_v1_gone');
    try {
      logged.length = 0;
      const e = await refusal(await withToken(h.app, 'GET', '/jobs/1'));
      expect(e).toEqual({ code: 'database_needs_operator', message: expect.stringContaining('run `workhorse migrate`') });
      expect(logged).toHaveLength(1);
    } finally {
      await db.pool.query('alter function workhorse.get_job_v1_gone(text, bigint) rename to get_job_v1');
    }
  });
});

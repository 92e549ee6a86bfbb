// Every 400's issue paths are relative to the request body, as http.md
// says: a signal's payload problems are under ["payload", ...] (they were
// relative to the payload), outbox ids under ["ids", i] (they were [i]).
// Nothing is written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { buildHttp, withToken, type ErrorJson, type HttpHarness } from './helpers.js';

let db: TestDatabase;
let h: HttpHarness;

beforeAll(async () => {
  db = await createTestDatabase();
  h = buildHttp(db);
});

afterAll(async () => {
  await h.client.close();
  await db.drop();
});

async function issuePaths(method: string, path: string, body: string): Promise<unknown[]> {
  const res = await withToken(h.app, method, path, body);
  const json = (await res.json()) as ErrorJson;
  expect(res.status, JSON.stringify(json)).toBe(400);
  expect(json.error.code).toBe('validation_failed');
  return json.error.issues!.map((i) => i.path);
}

describe('issue paths relative to the body', () => {
  it('a signal payload the database cannot store', async () => {
    expect(await issuePaths('POST', '/jobs/1/signals/paid', '{"payload":{"a":"x\\u0000"}}')).toEqual([['payload', 'a']]);
    expect(await issuePaths('POST', '/signals/order%3A1/paid', '{"payload":{"list":[1,"\\ud800"]}}')).toEqual([['payload', 'list', 1]]);
    expect(await issuePaths('POST', '/signals/order%3A1/paid', `{"payload":${'['.repeat(600)}${']'.repeat(600)}}`)).toEqual([['payload']]);
    const signals = await db.pool.query('select count(*)::int as n from workhorse.job_signals');
    expect(signals.rows[0].n).toBe(0);
  });

  it('outbox ids', async () => {
    expect(await issuePaths('POST', '/outbox/retry', '{"ids":["1","abc"]}')).toEqual([['ids', 1]]);
    expect(await issuePaths('POST', '/outbox/discard', '{"ids":[1,"9223372036854775808"]}')).toEqual([['ids', 1]]);
    const res = await withToken(h.app, 'POST', '/outbox/retry', { ids: [1.5] });
    expect(((await res.json()) as ErrorJson).error.message).toMatch(/an event id is a positive integer/);
  });
});

// Every 400's issue paths are relative to the request body, as http.md
// says: a signal's payload problems are under ["payload", ...] (they were
// relative to the payload), outbox ids under ["ids", i] (they were [i]), and
// an enqueue's options that only the insert checks under [...] or
// ["jobs", i, ...] (they were [i, ...], "item i: ...").
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
  it("an enqueue's options the insert checks against the job's definition", async () => {
    // A backoff override whose maxMs is below the definition's baseMs (1 s by default): checked only
    // once merged, it came back as "item 0: ..." at [0, ...] for one job, and at [2, ...] in a batch.
    const job = { type: 'email.send', payload: { to: 'ada@example.com', subject: 'hi' } };
    const one = await withToken(h.app, 'POST', '/jobs', { ...job, backoff: { maxMs: 10 } });
    const oneJson = (await one.json()) as ErrorJson;
    expect(one.status).toBe(400);
    expect(oneJson.error.message).not.toMatch(/^item /);
    expect(oneJson.error.issues!.map((i) => i.path)).toEqual([['backoff', 'baseMs']]);
    const batch = await withToken(h.app, 'POST', '/jobs', { jobs: [job, job, { ...job, backoff: { maxMs: 10 } }] });
    const batchJson = (await batch.json()) as ErrorJson;
    expect(batch.status).toBe(400);
    expect(batchJson.error.message).toMatch(/^jobs\.2: /);
    expect(batchJson.error.issues!.map((i) => i.path)).toEqual([['jobs', 2, 'backoff', 'baseMs']]);
    expect((await db.pool.query('select count(*)::int as n from workhorse.jobs')).rows[0].n).toBe(0);
  });

  it('a missing payload is required, whatever the schema', async () => {
    for (const body of [{ type: 'email.send' }, { jobs: [{ type: 'email.send', payload: { to: 'ada@example.com', subject: 'hi' } }, { type: 'email.send' }] }]) {
      const res = await withToken(h.app, 'POST', '/jobs', body);
      const json = (await res.json()) as ErrorJson;
      expect(res.status).toBe(400);
      expect(json.error.issues!).toEqual([
        { path: 'jobs' in body ? ['jobs', 1, 'payload'] : ['payload'], message: 'required: give the job its payload (null when it takes none)' },
      ]);
    }
  });

  it('a runAt of a date that does not exist says so, naming the field once', async () => {
    const res = await withToken(h.app, 'POST', '/jobs', { type: 'email.send', payload: { to: 'ada@example.com', subject: 'hi' }, runAt: '2030-02-30T00:00:00Z' });
    const json = (await res.json()) as ErrorJson;
    expect(res.status).toBe(400);
    expect(json.error.issues!).toEqual([
      { path: ['runAt'], message: 'expected an ISO 8601 date-time with a time zone, of a date and time that exist (2030-01-31T09:00:00Z)' },
    ]);
  });

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

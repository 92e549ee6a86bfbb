// A request that reaches the API after the server closed its database
// client (it is shutting down) is a 503 shutting_down, not a 500, and writes
// nothing.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { buildHttp, countJobs, withToken } from './helpers.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

it('answers 503 shutting_down once the server has closed its client', async () => {
  const h = buildHttp(db);
  await h.client.close();
  for (const [method, path, body] of [
    ['GET', '/jobs', undefined],
    ['POST', '/jobs', { type: 'email.send', payload: { to: 'ada@example.com', subject: 'hi' } }],
  ] as const) {
    const res = await withToken(h.app, method, path, body);
    expect(res.status, `${method} ${path}`).toBe(503);
    expect(await res.json()).toEqual({ error: { code: 'shutting_down', message: 'the server is shutting down; retry shortly' } });
  }
  expect(await countJobs(db)).toBe(0);
});

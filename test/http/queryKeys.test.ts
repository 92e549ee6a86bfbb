// Query parameters: `__proto__` is an unknown parameter like any other
// (400 naming it), never silently ignored or turned into the query
// object's prototype; repeated parameters are refused. A list route that
// takes no parameter refuses any, over a real socket.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { buildHttp, TOKEN, withToken, type ErrorJson, type HttpHarness } from './helpers.js';
import { startServer } from './support/server.js';

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

describe('query keys', () => {
  it.each(['/jobs', '/outbox', '/alerts', '/decisions'])('%s refuses ?__proto__, once or repeated, naming it', async (route) => {
    for (const query of ['__proto__=1', '__proto__=1&__proto__=2', 'limit=5&__proto__=x']) {
      const res = await withToken(h.app, 'GET', `${route}?${query}`);
      const json = (await res.json()) as ErrorJson;
      expect(res.status, `${route}?${query} ${JSON.stringify(json)}`).toBe(400);
      expect(json.error.code).toBe('validation_failed');
      expect(json.error.message).toContain('"__proto__"');
    }
  });

  it.each(['/queues', '/workers', '/schedules'])('%s takes no parameter: ?name=x is 400 naming it, not an unfiltered list', async (route) => {
    const server = await startServer(h.app);
    try {
      const get = (q: string) => fetch(`${server.url}${route}${q}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      const res = await get('?name=q1');
      const json = (await res.json()) as ErrorJson;
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(json.error.code).toBe('validation_failed');
      expect(json.error.message).toContain('"name"');
      expect((await get('')).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('a known parameter still parses', async () => {
    const res = await withToken(h.app, 'GET', '/jobs?limit=5&status=ready');
    expect(res.status).toBe(200);
  });
});

// Query parameters: `__proto__` is an unknown parameter like any other
// (400 naming it), never silently ignored or turned into the query
// object's prototype; repeated parameters are refused. A list route that
// takes no parameter refuses any, over a real socket, and so does every
// POST route (its input is the body): nothing is written.
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

  it.each([
    ['/jobs', 'status', 'failed'],
    ['/outbox', 'state', 'dead'],
    ['/decisions', 'queue', 'email'],
    ['/alerts', 'state', 'open'],
  ])('%s refuses a repeated ?%s the same way as every list route, over a real socket', async (route, param, value) => {
    const server = await startServer(h.app);
    try {
      const res = await fetch(`${server.url}${route}?${param}=${value}&${param}=${value}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      const json = (await res.json()) as ErrorJson;
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(json.error.code).toBe('validation_failed');
      expect(json.error.issues).toEqual([{ path: [param], message: 'given more than once: give it once' }]);
      expect(json.error.message).toBe(`query parameter "${param}" is given 2 times: give it once`);
    } finally {
      await server.close();
    }
  });

  it('/alerts still names its states for one it does not know', async () => {
    const json = (await (await withToken(h.app, 'GET', '/alerts?state=closed')).json()) as ErrorJson;
    expect(json.error.issues).toEqual([{ path: ['state'], message: 'Invalid option: expected one of "open"|"resolved"' }]);
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
      // A parameter with an empty name, which the router's parser drops, is refused too.
      for (const q of ['?=', '?=x', '?a=1&=2']) expect((await get(q)).status, q).toBe(400);
      expect((await get('')).status).toBe(200);
      expect((await get('?')).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('a POST route refuses any query parameter, naming it, and writes nothing', async () => {
    const server = await startServer(h.app);
    try {
      const post = (path: string, body?: string) =>
        fetch(`${server.url}${path}`, { method: 'POST', body, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' } });
      const job = await h.client.enqueue('email.send', { to: 'ada@example.com', subject: 'q' });
      for (const [path, body] of [
        [`/jobs/${job.id}/cancel?keepChildren=true`, undefined],
        ['/jobs?dedupeKey=k1', JSON.stringify({ type: 'email.send', payload: { to: 'ada@example.com', subject: 'q2' } })],
        ['/queues/email/pause?reason=deploy', undefined],
        [`/jobs/${job.id}/signals/paid?payload=1`, '{}'],
        ['/outbox/discard?all=1', '{"ids":["1"]}'],
      ] as const) {
        const res = await post(path, body);
        const json = (await res.json()) as ErrorJson;
        expect(res.status, `${path} ${JSON.stringify(json)}`).toBe(400);
        expect(json.error.code).toBe('validation_failed');
        expect(json.error.message, path).toContain('takes no query parameter');
        expect(json.error.message, path).toContain(`"${path.split('?')[1]!.split('=')[0]}"`);
      }
      expect((await h.client.getJob(job.id))!.status).toBe('ready');
      expect((await h.client.admin.listJobs({ limit: 10 })).jobs).toHaveLength(1);
      expect((await h.client.admin.listQueues()).find((q) => q.name === 'email')?.paused ?? false).toBe(false);
      expect((await post(`/jobs/${job.id}/cancel`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('a known parameter still parses', async () => {
    const res = await withToken(h.app, 'GET', '/jobs?limit=5&status=ready');
    expect(res.status).toBe(200);
  });
});

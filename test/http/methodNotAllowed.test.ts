// A known path asked with a method it has no route for is a 405
// `method_not_allowed` naming the methods it has, in the body and in an
// Allow header (HEAD wherever GET is), over a real socket. It needs no
// credentials, like a 404, and says nothing a route's guard would hide; an
// unknown path stays a 404, and the dashboard under /ui keeps its own pages,
// assets and forms.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ASSETS, assetUrl } from '../../src/http/ui/assets/assets.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { buildHttp, countJobs, TOKEN, type ErrorJson, type HttpHarness } from './helpers.js';
import { startServer, type RunningServer } from './support/server.js';

let db: TestDatabase;
let h: HttpHarness;
let server: RunningServer;

beforeAll(async () => {
  db = await createTestDatabase();
  h = buildHttp(db, { sessionSecret: 'method-test-session-secret-0123456789' });
  server = await startServer(h.app);
});

afterAll(async () => {
  await server?.close();
  await h?.client.close();
  await db?.drop();
});

function send(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Response> {
  return fetch(`${server.url}${path}`, { method, headers, body, redirect: 'manual' });
}

describe('a known path with the wrong method', () => {
  for (const [method, path, allow] of [
    ['DELETE', '/jobs', 'GET, HEAD, POST'],
    ['PUT', '/jobs', 'GET, HEAD, POST'],
    ['PUT', '/tick', 'POST'],
    ['GET', '/tick', 'POST'],
    ['DELETE', '/jobs/42', 'GET, HEAD'],
    ['GET', '/jobs/42/cancel', 'POST'],
    ['PATCH', '/queues', 'GET, HEAD'],
    ['POST', '/healthz', 'GET, HEAD'],
    ['GET', '/outbox/retry', 'POST'],
    ['DELETE', '/signals/k/paid', 'POST'],
  ] as const) {
    it(`answers ${method} ${path} with 405 and Allow: ${allow}`, async () => {
      const res = await send(method, path, { authorization: `Bearer ${TOKEN}` });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe(allow);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toEqual({
        error: { code: 'method_not_allowed', message: `${method} is not allowed on ${path}: use ${allow}` },
      });
    });
  }

  it('answers HEAD on a POST-only path with 405 and the Allow header, without a body', async () => {
    const res = await send('HEAD', '/tick');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(await res.text()).toBe('');
  });

  it('answers without credentials, the same as with them, and runs nothing', async () => {
    const anonymous = await send('DELETE', '/jobs', {}, '{}');
    const wrongToken = await send('DELETE', '/jobs', { authorization: 'Bearer not-a-token' }, '{}');
    for (const res of [anonymous, wrongToken]) {
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, HEAD, POST');
      expect(((await res.json()) as ErrorJson).error.code).toBe('method_not_allowed');
    }
    expect(h.tick.calls).toEqual([]);
    expect(await countJobs(db)).toBe(0);
  });

  it('still authenticates the right method first', async () => {
    const res = await send('GET', '/jobs');
    expect(res.status).toBe(401);
    expect(((await res.json()) as ErrorJson).error.code).toBe('unauthorized');
    const head = await send('HEAD', '/jobs', { authorization: `Bearer ${TOKEN}` });
    expect(head.status).toBe(200);
  });
});

describe('an unknown path', () => {
  for (const [method, path] of [
    ['GET', '/nope'],
    ['DELETE', '/nope'],
    ['GET', '/jobs/42/nope'],
    ['POST', '/tick/extra'],
  ] as const) {
    it(`answers ${method} ${path} with 404 and no Allow header`, async () => {
      const res = await send(method, path, { authorization: `Bearer ${TOKEN}` });
      expect(res.status).toBe(404);
      expect(res.headers.get('allow')).toBeNull();
      expect(await res.json()).toEqual({ error: { code: 'not_found', message: `no route for ${method} ${path}` } });
    });
  }
});

describe('the dashboard under /ui', () => {
  it('serves its sign-in page and its assets', async () => {
    const page = await send('GET', '/ui/sign-in');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    for (const a of Object.values(ASSETS)) {
      const res = await send('GET', assetUrl(a));
      expect(res.status, a.name).toBe(200);
      expect(res.headers.get('content-type')).toBe(a.type);
    }
  });

  it('takes its sign-in form', async () => {
    const res = await fetch(`${server.url}/ui/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
      body: new URLSearchParams({ token: TOKEN, next: '/ui' }),
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('set-cookie')).toMatch(/^__Host-/);
  });

  it('keeps answering a wrong method with its own 404 page', async () => {
    const res = await send('DELETE', '/ui/queues', { authorization: `Bearer ${TOKEN}` });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
  });
});

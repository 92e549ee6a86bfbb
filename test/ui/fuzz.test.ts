// Fuzz the dashboard: random methods on every /ui route, path segments and
// query values holding NUL, lone surrogates, bad percent-encoding and ids
// past 2^63-1; form bodies that are junk, too big, not UTF-8 or of another
// type; every kind of credential (none, each scope's bearer token, junk,
// a session, a forged cookie) and of origin. No request may get a 5xx or
// be logged as an internal failure; every answer carries the
// Content-Security-Policy; every error is a page (or, for a live refresh,
// the API's JSON error). Seeded; a failure prints the seed and the request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../../src/http/ui/securityHeaders.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { ADMIN_TOKEN, csrfOf, ENQUEUE_TOKEN, READ_TOKEN, sessionCookie, startDashboard, type Dashboard } from './support/dashboard.js';

const SEED = 20261201;
const CASES = 1500;

function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  return { int, pick };
}

const ROUTES: [string, string][] = [
  ['GET', '/ui'],
  ['GET', '/ui/jobs/:x'],
  ['GET', '/ui/queues'],
  ['GET', '/ui/workers'],
  ['GET', '/ui/schedules'],
  ['GET', '/ui/decisions'],
  ['GET', '/ui/alerts'],
  ['GET', '/ui/outbox'],
  ['GET', '/ui/sign-in'],
  ['POST', '/ui/sign-in'],
  ['POST', '/ui/sign-out'],
  ['POST', '/ui/queues/:x/pause'],
  ['POST', '/ui/queues/:x/resume'],
  ['POST', '/ui/workers/:x/pause'],
  ['POST', '/ui/workers/:x/resume'],
  ['POST', '/ui/jobs/:x/retry'],
  ['POST', '/ui/jobs/:x/cancel'],
  ['POST', '/ui/jobs/:x/decisions/:x'],
  ['POST', '/ui/jobs/1/decisions/approve'],
  ['POST', '/ui/outbox/:x/retry'],
  ['POST', '/ui/outbox/:x/discard'],
  ['GET', '/ui/assets/:x'],
  ['GET', '/ui/:x'],
  ['PUT', '/ui/jobs/:x'],
  ['DELETE', '/ui/queues/:x/pause'],
];

const SEGMENTS = [
  '1', '0', '-1', '2', '9223372036854775807', '9223372036854775808', 'reports', 'default', 'ghost', 'w-fuzz', 'dashboard.js', 'dashboard.css',
  '%00', 'a%00b', '%ED%A0%80', '%F0%9F%98%80', '%ff', '%', '%2F', 'a%2Fb', '..', '%2e%2e', 'x'.repeat(300), '%22%3E%3Cwh-x%3E', '%3Cwh-x%3E',
];
const QUERY_KEYS = ['status', 'queue', 'type', 'before', 'done', 'subject', 'next', 'v', 'sort', '__proto__', 'a%00', 'state', 'topic'];
const QUERY_VALUES = [...SEGMENTS, 'ready', 'failed', 'bogus', 'email.send', 'queue-paused', 'job-retried', 'decision-made', 'event-retried', 'dead', 'pending', 'delivered', 'order.paid', '', '/ui', 'https://evil.example', '%3Cwh-x%3E', '%22%3E%3Cwh-x%3E'];

let db: TestDatabase;
let d: Dashboard;
let session: { cookie: string; csrf: string };
let readSession: { cookie: string; csrf: string };

beforeAll(async () => {
  db = await createTestDatabase();
  // The admin token may decide too, so the decision action is reached past its scope check.
  d = await startDashboard(db, {
    apiTokens: [
      { name: 'ops', token: ADMIN_TOKEN, scopes: ['read', 'admin', 'decide'] },
      { name: 'viewer', token: READ_TOKEN, scopes: ['read'] },
      { name: 'edge', token: ENQUEUE_TOKEN, scopes: ['enqueue'] },
    ],
  });
  await d.client.enqueue('report.build', { account: 'a', rows: 1 });
  const cookie = await sessionCookie(d.url, ADMIN_TOKEN);
  session = { cookie, csrf: await csrfOf(d.url, cookie) };
  const readCookie = await sessionCookie(d.url, READ_TOKEN);
  readSession = { cookie: readCookie, csrf: await csrfOf(d.url, readCookie) };
});

afterAll(async () => {
  await d?.close();
  await db?.drop();
});

describe('fuzz: the dashboard', () => {
  it(`${CASES} requests of every kind on every /ui route: no 5xx, always the CSP, errors as pages`, { timeout: 120_000 }, async () => {
    const r = rng(SEED);
    const statuses = new Map<number, number>();
    const app = (d.server as unknown as { url: string }).url;
    for (let i = 0; i < CASES; i++) {
      const [method, template] = r.pick(ROUTES);
      let path = template.replace(/:x/g, () => r.pick(SEGMENTS));
      if (r.int(2) === 0) path += `?${Array.from({ length: 1 + r.int(3), }, () => `${r.pick(QUERY_KEYS)}=${r.pick(QUERY_VALUES)}`).join('&')}`;
      const headers: Record<string, string> = {};
      const who = r.int(8);
      if (who === 0) headers.authorization = `Bearer ${ADMIN_TOKEN}`;
      else if (who === 1) headers.authorization = `Bearer ${r.pick([READ_TOKEN, ENQUEUE_TOKEN])}`;
      else if (who === 2) headers.authorization = r.pick(['Bearer', 'Basic x', `Bearer ${ADMIN_TOKEN}x`, 'bearer  ']);
      else if (who === 3 || who === 4) headers.cookie = (who === 3 ? session : readSession).cookie;
      else if (who === 5) headers.cookie = r.pick(['__Host-workhorse-session=x.y', '__Host-workhorse-session=', `${session.cookie}x`, '__Host-workhorse-session=%00.%ff', 'a=b']);
      if (r.int(3) === 0) headers.origin = r.pick(['https://evil.example', 'null', 'not a url', app]);
      if (r.int(4) === 0) headers['sec-fetch-site'] = r.pick(['same-origin', 'cross-site', 'none', 'same-site']);
      if (r.int(5) === 0) headers['x-workhorse-live'] = '1';
      let body: string | Uint8Array | undefined;
      if (method !== 'GET') {
        headers['content-type'] = r.pick(['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded; charset=utf-8', 'application/json', 'text/plain']);
        body = r.pick<() => string | Uint8Array>([
          () => new URLSearchParams({ csrf: r.pick([session.csrf, readSession.csrf, 'forged', '']) }).toString(),
          () =>
            new URLSearchParams({ csrf: r.pick([session.csrf, 'forged']), choice: r.pick(['ship', '', 'x'.repeat(300), '\u0000', '<wh-x>']), comment: r.pick(['', 'ok', 'y'.repeat(5000), '\ud800']) }).toString(),
          () => new URLSearchParams({ token: r.pick([ADMIN_TOKEN, READ_TOKEN, 'wrong-token-0123456789', '', ' \u0000 ', '<wh-x>']), next: r.pick([...QUERY_VALUES, '/ui?x="><wh-x>']) }).toString(),
          () => 'csrf=%ff%fe&token=%',
          () => new Uint8Array([0x63, 0x73, 0x72, 0x66, 0x3d, 0xff, 0xfe]),
          () => 'x'.repeat(r.pick([10, 5000, 70_000])),
          () => '{"csrf":"x"}',
          () => '',
        ])();
      }
      const where = `seed ${SEED} #${i}: ${method} ${path} ${JSON.stringify(headers).slice(0, 160)}`;
      const res = await fetch(`${d.url}${path}`, { method, headers, body, redirect: 'manual' });
      const text = await res.text();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      expect(res.status, `${where} -> ${text.slice(0, 300)}`).toBeLessThan(500);
      // (A dot segment can take the request out of /ui, to the API's own JSON 404.)
      const underUi = new URL(`${d.url}${path}`).pathname.startsWith('/ui');
      if (underUi) expect(res.headers.get('content-security-policy'), where).toBe(CONTENT_SECURITY_POLICY);
      const type = res.headers.get('content-type') ?? '';
      if (underUi && res.status >= 400) {
        // A live refresh gets the API's JSON error (the sign-in form's own answers stay pages); anything else a page.
        if (type.startsWith('application/json')) {
          expect(headers['x-workhorse-live'], where).toBe('1');
          expect((JSON.parse(text) as { error: { code: string } }).error.code, where).toMatch(/^[a-z_]+$/);
        } else expect(type, where).toMatch(/^text\/html/);
      }
      // Whatever the request carried, nothing of it reaches a page unescaped.
      expect(text, where).not.toContain('<wh-x>');
    }
    expect(d.logged).toEqual([]);
    for (const status of [200, 303, 400, 401, 403, 404]) expect(statuses.get(status) ?? 0, `status ${status} in ${JSON.stringify([...statuses])}`).toBeGreaterThan(0);
  });
});

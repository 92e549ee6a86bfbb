// Fuzz every route: random methods on every path, path parameters and query
// values holding NUL, lone surrogates, invalid percent-encoding, ids past
// 2^63-1; bodies whose strings PostgreSQL cannot store, dates outside
// timestamptz, backoffs with unknown keys; tokens of every scope, junk and
// signatures. No request may get a 5xx or be logged as an internal failure,
// and every error is the JSON error shape. Seeded; a failure prints the seed
// and the request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signRequest } from '../../src/signing/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { buildHttp, SECRET, TOKEN, type HttpHarness } from './helpers.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261130);
const CASES = 3000;

const READ = 'fuzz-read-token-0123456789';
const ENQUEUE = 'fuzz-enqueue-token-01234567';

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
  return { next, int, pick };
}
type Rng = ReturnType<typeof rng>;

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'] as const;
const PATHS = [
  '/jobs',
  '/jobs/:id',
  '/jobs/:id/cancel',
  '/jobs/:id/retry',
  '/queues',
  '/queues/:name/pause',
  '/queues/:name/resume',
  '/workers',
  '/workers/:id/pause',
  '/workers/:id/resume',
  '/schedules',
  '/healthz',
  '/tick',
  '/:junk',
  '/jobs/:id/:junk',
  '/decisions',
  '/jobs/:id/decisions/:name',
  '/jobs/:id/signals/:name',
  '/signals/:key/:name',
];

/** The routes that exist: most cases hit one, the rest any method on any path. */
const ROUTES: [string, string][] = [
  ['POST', '/jobs'],
  ['GET', '/jobs'],
  ['GET', '/jobs/:id'],
  ['POST', '/jobs/:id/cancel'],
  ['POST', '/jobs/:id/retry'],
  ['GET', '/queues'],
  ['POST', '/queues/:name/pause'],
  ['POST', '/queues/:name/resume'],
  ['GET', '/workers'],
  ['POST', '/workers/:id/pause'],
  ['POST', '/workers/:id/resume'],
  ['GET', '/schedules'],
  ['GET', '/outbox'],
  ['POST', '/outbox/retry'],
  ['POST', '/outbox/discard'],
  ['GET', '/alerts'],
  ['GET', '/healthz'],
  ['POST', '/tick'],
  ['GET', '/decisions'],
  ['POST', '/jobs/:id/decisions/:name'],
  ['POST', '/jobs/:id/signals/:name'],
  ['POST', '/signals/:key/:name'],
];

/** Path segments as sent (already percent-encoded, sometimes invalidly). */
const SEGMENTS = [
  '1', '0', '-1', '01', '9223372036854775807', '9223372036854775808', '18446744073709551616', '99999999999999999999',
  '1e3', '0x10', 'ghost', 'reports', 'default', 'blobs', 'host-a%3A1%3Aabc', '%00', 'a%00b', '%ED%A0%80', '%F0%9F%98%80',
  '%ff', '%', '%2', '..', '%2e%2e', '%2F', 'a%2Fb', ' ', '%20', 'x'.repeat(300), '%E2%80%A8', '%C0%80', '%5C', '%22%27%3C%3E',
];

/** Query values as sent. */
const QUERY_VALUES = [...SEGMENTS, 'ready', 'failed', 'bogus', 'email.send', '100', '1000', '1001', '0', '', '1%00', 'ready%00'];
const QUERY_KEYS = ['status', 'queue', 'type', 'limit', 'cursor', 'sort', '__proto__', 'a%00', '%ED%A0%80'];

const NASTY_STRINGS = ['\u0000', 'a\u0000b', '\ud800', '\udc00', 'x\ud83d', '\udfff\ud800', '😀', '\u2028', 'é', '', 'k'.repeat(600)];

function nastyJson(r: Rng, depth = 0): unknown {
  switch (r.int(depth > 3 ? 4 : 7)) {
    case 0: return r.pick([null, true, 0, -1, 1.5, 2 ** 63, 1e308, Number.MAX_SAFE_INTEGER + 2]);
    case 1: return r.pick(NASTY_STRINGS);
    case 2: return r.pick(['0000-01-01T00:00:00Z', '+010000-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '2026-02-30T00:00:00Z']);
    case 3: return r.pick(['9223372036854775808', '9223372036854775807']);
    case 4: return Array.from({ length: r.int(3) }, () => nastyJson(r, depth + 1));
    default: {
      const o: Record<string, unknown> = {};
      for (let i = r.int(4); i > 0; i--) o[r.pick([...NASTY_STRINGS, 'to', 'subject', 'a'])] = nastyJson(r, depth + 1);
      return o;
    }
  }
}

/** An enqueue whose payload nests `n` objects deep, written as text (JSON.stringify would overflow first). */
function deepBody(n: number): string {
  return `{"type":"blob.store","payload":${'{"v":'.repeat(n)}0${'}'.repeat(n)}}`;
}

const email = { type: 'email.send', payload: { to: 'ada@example.com', subject: 'hi' } };

/** Bodies that are valid JSON and mostly valid enqueues, with one stored string, date or option broken. */
function nastyBody(r: Rng): string {
  const s = () => r.pick(NASTY_STRINGS);
  const bodies: (() => unknown)[] = [
    () => ({ ...email, payload: { ...email.payload, subject: s() } }),
    () => ({ ...email, dedupeKey: s() }),
    () => ({ ...email, concurrencyKey: s() }),
    () => ({ ...email, queue: s() }),
    () => ({ ...email, runAt: nastyJson(r) }),
    () => ({ ...email, runAt: r.pick(['0000-01-01T00:00:00Z', '0001-01-01T00:59:59+01:00', '9999-12-31T23:59:59-01:00']) }),
    () => ({ ...email, backoff: r.pick([{ kind: 'fixed', extra: 1 }, { baseMs: 2 ** 31 - 1, maxMs: 0 }, { baseMs: 5, maxMs: 5 }, nastyJson(r)]) }),
    () => ({ type: 'blob.store', payload: { [s()]: nastyJson(r) } }),
    () => ({ jobs: [email, { ...email, dedupeKey: s() }] }),
    () => ({ budgetMs: nastyJson(r) }),
    () => ({ choice: r.pick(['approve', s()]), by: r.pick(['ada', s(), nastyJson(r)]), comment: r.pick([s(), nastyJson(r)]) }),
    () => ({ payload: nastyJson(r) }),
    () => nastyJson(r),
  ];
  if (r.int(12) === 0) return deepBody(r.pick([100, 511, 513, 5000, 100_000]));
  return JSON.stringify(r.pick(bodies)());
}

function target(r: Rng): { method: string; path: string } {
  const [method, template] = r.int(10) < 7 ? r.pick(ROUTES) : [r.pick(METHODS), r.pick(PATHS)];
  let path = template.replace(/:[a-z]+/g, () => r.pick(SEGMENTS));
  if (r.int(2) === 0) {
    const pairs = Array.from({ length: 1 + r.int(3) }, () => `${r.pick(QUERY_KEYS)}=${r.pick(QUERY_VALUES)}`);
    path += `?${pairs.join('&')}`;
  }
  return { method, path };
}

let db: TestDatabase;
let h: HttpHarness;
const logged: unknown[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  h = buildHttp(db, {
    apiTokens: [
      { name: 'reader', token: READ, scopes: ['read'] },
      { name: 'producer', token: ENQUEUE, scopes: ['enqueue'] },
    ],
    signedScopes: ['read', 'enqueue'],
    log: (_m, err) => logged.push(err),
  });
});

afterAll(async () => {
  await h.client.close();
  await db.drop();
});

describe('fuzz: every route', () => {
  it(`${CASES} requests with NUL, lone surrogates, out-of-range ids and dates, on every method and path: no 5xx`, { timeout: 60_000 }, async () => {
    const r = rng(SEED);
    const statuses = new Map<number, number>();
    for (let i = 0; i < CASES; i++) {
      const { method, path } = target(r);
      const hasBody = !['GET', 'HEAD'].includes(method) && r.int(3) > 0;
      const body = hasBody ? nastyBody(r) : undefined;
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      const auth = r.int(10);
      if (auth < 5) headers.authorization = `Bearer ${TOKEN}`;
      else if (auth === 5) headers.authorization = `Bearer ${r.pick([READ, ENQUEUE])}`;
      else if (auth === 6) headers.authorization = r.pick(['Bearer', 'Basic x', `Bearer ${TOKEN}x`, 'bearer  ', `Bearer ${TOKEN} extra`]);
      else if (auth < 9) Object.assign(headers, await signRequest({ secret: SECRET, method, path, body }));
      const where = `seed ${SEED} #${i}: ${method} ${path} ${JSON.stringify(headers).slice(0, 120)} ${String(body).slice(0, 120)}`;
      const res = await h.app.request(path, { method, body, headers });
      const text = await res.text();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      expect(res.status, `${where} -> ${text.slice(0, 200)}`).toBeLessThan(500);
      if (res.status >= 400 && method !== 'HEAD') {
        const json = JSON.parse(text) as { error: { code: unknown; message: unknown } };
        expect(typeof json.error.code, where).toBe('string');
        expect(typeof json.error.message, where).toBe('string');
      }
    }
    expect(logged).toEqual([]);
    // The cases reach past routing and authentication into validation and the handlers.
    for (const status of [200, 400, 401, 403, 404]) expect(statuses.get(status) ?? 0, `status ${status} in ${JSON.stringify([...statuses])}`).toBeGreaterThan(0);
  });
});

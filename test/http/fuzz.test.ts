// Fuzz: 500 random malformed bodies and headers against POST /jobs and POST
// /tick. None may produce a 5xx, every answer is the JSON error shape, no
// tick runs and no row is written. The generator is seeded; a failure prints
// the seed and the offending request. (fuzzRoutes.test.ts sends such values
// to every other route.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signRequest } from '../../src/signing/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { buildHttp, countJobs, NEXT_SECRET, SECRET, TOKEN, type HttpHarness } from './helpers.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261129);
const JOBS_CASES = 300;
const TICK_CASES = 200;

/** mulberry32: small, fast, seedable. */
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

function randomString(r: Rng, max = 40): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789 .:/-_"\\{}[]@é\u0000\u2028😀\udfff\ud800';
  return Array.from({ length: r.int(max) }, () => r.pick([...alphabet])).join('');
}

function randomJson(r: Rng, depth = 0): unknown {
  const kind = r.int(depth > 3 ? 5 : 8);
  switch (kind) {
    case 0: return null;
    case 1: return r.next() < 0.5;
    case 2: return r.pick([0, -1, 1.5, 1e308, -0, 2 ** 63, Number.MAX_SAFE_INTEGER + 2]);
    case 3: return randomString(r);
    case 4: return r.pick(['email.send', 'report.build', 'sms.send', '', '../../etc', 'a'.repeat(200)]);
    case 5: return Array.from({ length: r.int(4) }, () => randomJson(r, depth + 1));
    default: {
      const o: Record<string, unknown> = {};
      for (let i = r.int(5); i > 0; i--) {
        o[r.pick(['type', 'payload', 'jobs', 'queue', 'priority', 'runAt', 'delayMs', 'dedupeKey', '__proto__', 'constructor', randomString(r, 8)])] = randomJson(r, depth + 1);
      }
      return o;
    }
  }
}

const validEmail = { type: 'email.send', payload: { to: 'ada@example.com', subject: 'hi' } };

/** Near-valid bodies, each broken in exactly one way that must be refused. */
function brokenItem(r: Rng): unknown {
  const breakers: (() => unknown)[] = [
    () => ({ ...validEmail, payload: { ...validEmail.payload, to: randomString(r).replace(/@/g, '') } }),
    () => ({ ...validEmail, payload: { ...validEmail.payload, subject: r.pick([null, 7, '', 'x'.repeat(201), [], {}]) } }),
    () => ({ ...validEmail, payload: { ...validEmail.payload, [randomString(r, 6) || 'k']: 1 } }),
    () => ({ ...validEmail, type: r.pick(['sms.send', 'Email.Send', 'email.send ', '', 'x'.repeat(129), 42, null]) }),
    () => ({ ...validEmail, delayMs: r.pick([-1, 1.5, '10', 1e20, null]) }),
    () => ({ ...validEmail, priority: r.pick([40000, -40000, 0.5, 'high', null]) }),
    () => ({ ...validEmail, runAt: r.pick(['tomorrow', '2026-13-01T00:00:00Z', '2026-01-01', 1700000000, null]) }),
    () => ({ ...validEmail, runAt: '2030-01-01T00:00:00Z', delayMs: 5 }),
    () => ({ ...validEmail, dedupeKey: r.pick(['', 'k'.repeat(513), 5, null, 'k\u0000', '\ud800', 'a\udc00b']) }),
    () => ({ ...validEmail, concurrencyKey: r.pick(['\u0000', 'x\ud83d']) }),
    () => ({ ...validEmail, payload: { ...validEmail.payload, subject: r.pick(['\u0000', 'a\ud800', '\udfff z']) } }),
    () => ({ ...validEmail, runAt: r.pick(['0000-01-01T00:00:00Z', '0000-12-31T23:59:59+00:00', '0001-01-01T00:00:00+14:00']) }),
    () => ({ ...validEmail, backoff: r.pick([{ kind: 'fixed', jitter: true }, { baseMs: 10_000, maxMs: 10 }, { maxMs: 5 }]) }),
    () => ({ ...validEmail, maxAttempts: r.pick([0, 1001, -3, 'many']) }),
    () => ({ ...validEmail, queue: r.pick(['', 'bad queue', 'q'.repeat(101), 'a\nb', 3]) }),
    () => ({ ...validEmail, backoff: r.pick([{ kind: 'random' }, { baseMs: -1 }, 'fast', []]) }),
    () => ({ ...validEmail, [r.pick(['__proto__', 'constructor', 'colour', 'id', 'status'])]: {} }),
    () => ({ jobs: [validEmail, { ...validEmail, payload: null }] }),
    () => ({ jobs: r.pick([[], {}, 'all', null, [1, 2]]) }),
    () => ({ jobs: [validEmail], extra: true }),
    () => ({ ...validEmail, payload: { to: 'a@b.co', subject: 'x', nested: JSON.parse('['.repeat(2000) + ']'.repeat(2000)) } }),
    () => ({ type: 'report.build', payload: { account: 'x'.repeat(300 * 1024), rows: 1 } }),
    () => [validEmail],
  ];
  return r.pick(breakers)();
}

function randomBody(r: Rng): string | Uint8Array {
  switch (r.int(7)) {
    case 0: return Uint8Array.from({ length: r.int(64) }, () => r.int(256));
    case 1: { const s = JSON.stringify(validEmail); return s.slice(0, 1 + r.int(s.length - 1)); }
    case 2: return JSON.stringify(randomJson(r));
    case 3: return r.pick(['', ' ', 'null', 'true', '[]', '"x"', '{', '}', '\u0000', 'NaN', '{"type":"email.send","payload":{}}']);
    case 4: return 'x'.repeat(1024 * 1024 + 1 + r.int(1000));
    default: return JSON.stringify(brokenItem(r));
  }
}

const junkHeaderValue = (r: Rng) => r.pick(['', ' ', 'v1=', 'v1=zz', 'Bearer', 'Bearer ', 'null', '-1', '1e10', randomString(r, 30).replace(/[^\x20-\x7e]/g, '?')]);

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

async function expectCleanRefusal(res: Response, what: string, seen: Set<number>): Promise<void> {
  seen.add(res.status);
  const text = await res.text();
  const where = `seed ${SEED}: ${what} -> ${res.status} ${text.slice(0, 200)}`;
  expect(res.status, where).toBeGreaterThanOrEqual(400);
  expect(res.status, where).toBeLessThan(500);
  const body = JSON.parse(text) as { error: { code: unknown; message: unknown } };
  expect(typeof body.error.code, where).toBe('string');
  expect(typeof body.error.message, where).toBe('string');
}

describe('fuzz', () => {
  it(`${JOBS_CASES} malformed POST /jobs requests: no 5xx, no row written`, async () => {
    const r = rng(SEED);
    const seen = new Set<number>();
    for (let i = 0; i < JOBS_CASES; i++) {
      const body = randomBody(r);
      // Declared JSON (a string body would otherwise go as text/plain) unless a case below says otherwise.
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      const auth = r.int(10);
      if (auth < 6) headers.authorization = `Bearer ${TOKEN}`;
      else if (auth === 6) headers.authorization = junkHeaderValue(r);
      else if (auth === 7) Object.assign(headers, { 'x-workhorse-timestamp': junkHeaderValue(r), 'x-workhorse-signature': junkHeaderValue(r) });
      else if (auth === 8) Object.assign(headers, await signRequest({ secret: 'an-attacker-guessed-secret', method: 'POST', path: '/jobs', body }));
      if (r.int(4) === 0) headers['content-type'] = r.pick(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', junkHeaderValue(r)]);
      if (r.int(8) === 0) headers['content-length'] = r.pick(['abc', '-5', '99999999999', '0']);
      const res = await h.app.request('/jobs', { method: 'POST', body: body as RequestInit['body'], headers });
      await expectCleanRefusal(res, `POST /jobs #${i} ${JSON.stringify(headers)} ${String(body).slice(0, 120)}`, seen);
    }
    // The cases reach past authentication into validation, the size limits and the Content-Type check.
    expect([...seen].sort()).toEqual([400, 401, 413, 415]);
    expect(await countJobs(db)).toBe(0);
  });

  it(`${TICK_CASES} malformed POST /tick requests: no 5xx, no tick run, no row written`, async () => {
    const r = rng(SEED + 1);
    const seen = new Set<number>();
    const nowSec = Math.floor(Date.now() / 1000);
    for (let i = 0; i < TICK_CASES; i++) {
      let body: string | Uint8Array = randomBody(r);
      let headers: Record<string, string> = {};
      switch (r.int(6)) {
        case 0:
          break;
        case 1:
          headers = { 'x-workhorse-timestamp': junkHeaderValue(r), 'x-workhorse-signature': junkHeaderValue(r) };
          break;
        case 2:
          headers = { ...(await signRequest({ secret: r.pick([SECRET, NEXT_SECRET]), method: 'POST', path: '/tick', body, timestamp: nowSec + r.pick([-1, 1]) * (301 + r.int(10_000)) })) };
          break;
        case 3:
          headers = { ...(await signRequest({ secret: 'an-attacker-guessed-secret', method: 'POST', path: '/tick', body })) };
          break;
        case 4:
          // Signed for one body, sent with another.
          headers = { ...(await signRequest({ secret: SECRET, method: 'POST', path: '/tick', body: '{"budgetMs":100}' })) };
          body = '{"budgetMs":200}';
          break;
        default:
          // Correctly signed, but the body itself is invalid.
          body = JSON.stringify(r.pick([{ budgetMs: r.pick([-1, 0, 99, 1e9, 1.5, '100', null]) }, { budgetMs: 1000, extra: 1 }, [], 'tick', 1, null]));
          headers = { ...(await signRequest({ secret: SECRET, method: 'POST', path: '/tick', body })) };
      }
      if (r.int(3) === 0) headers.authorization = r.pick([`Bearer ${TOKEN}`, junkHeaderValue(r)]);
      headers['content-type'] = 'application/json';
      const res = await h.app.request('/tick', { method: 'POST', body: body as RequestInit['body'], headers });
      await expectCleanRefusal(res, `POST /tick #${i} ${JSON.stringify(headers)} ${String(body).slice(0, 120)}`, seen);
    }
    expect([...seen].sort()).toEqual([400, 401, 413]);
    expect(h.tick.calls).toEqual([]);
    expect(await countJobs(db)).toBe(0);
  });
});

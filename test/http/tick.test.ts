// POST /tick through app.request(): only a fresh, correctly signed request
// runs a tick; every other request is a 401 with a JSON body and runs nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { buildHttp, NEXT_SECRET, SECRET, signed, TOKEN, type ErrorJson, type HttpHarness } from './helpers.js';
import { signRequest } from '../../src/signing/index.js';

let db: TestDatabase;
let h: HttpHarness;

beforeAll(async () => {
  db = await createTestDatabase();
  h = buildHttp(db, { tickBudgetMs: 8000 });
});

afterAll(async () => {
  await h.client.close();
  await db.drop();
});

const nowSec = () => Math.floor(Date.now() / 1000);

async function expect401(res: Response, message: RegExp): Promise<void> {
  expect(res.status).toBe(401);
  expect(res.headers.get('content-type')).toMatch(/application\/json/);
  const body = (await res.json()) as ErrorJson;
  expect(body.error.code).toBe('unauthorized');
  expect(body.error.message).toMatch(message);
}

describe('POST /tick', () => {
  it('runs one tick for a validly signed request and returns its summary', async () => {
    const before = h.tick.calls.length;
    const res = await signed(h.app, 'POST', '/tick', '');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ claimed: 0, succeeded: 0, failed: 0, retried: 0, suspended: 0, lost: 0, recovered: 0, slotsFired: 0, fannedOut: 0, skippedTimeout: 0, msLeft: 8000 });
    expect(h.tick.calls.length).toBe(before + 1);
  });

  it('accepts the next secret during a key rotation', async () => {
    const res = await signed(h.app, 'POST', '/tick', '', { secret: NEXT_SECRET });
    expect(res.status).toBe(200);
  });

  it('refuses a signature made with a wrong secret and runs nothing', async () => {
    const before = h.tick.calls.length;
    await expect401(await signed(h.app, 'POST', '/tick', '', { secret: 'not-the-right-secret-at-all' }), /does not match/);
    expect(h.tick.calls.length).toBe(before);
  });

  it('refuses an unsigned request', async () => {
    const before = h.tick.calls.length;
    await expect401(await h.app.request('/tick', { method: 'POST' }), /missing x-workhorse-timestamp/);
    expect(h.tick.calls.length).toBe(before);
  });

  it('refuses a stale request (timestamp 301 s old) and one from 301 s in the future', async () => {
    const before = h.tick.calls.length;
    await expect401(await signed(h.app, 'POST', '/tick', '', { timestamp: nowSec() - 301 }), /outside the 300 s tolerance/);
    await expect401(await signed(h.app, 'POST', '/tick', '', { timestamp: nowSec() + 301 }), /outside the 300 s tolerance/);
    expect(h.tick.calls.length).toBe(before);
  });

  it('refuses a captured request replayed after the window, though it ran when first sent', async () => {
    const body = '{"budgetMs":2000}';
    const sentAt = nowSec() - 290;
    const headers = { 'content-type': 'application/json', ...(await signRequest({ secret: SECRET, method: 'POST', path: '/tick', body, timestamp: sentAt })) };
    const first = await h.app.request('/tick', { method: 'POST', body, headers });
    expect(first.status).toBe(200);
    // The same bytes replayed 11 s later: now outside the 300 s window.
    const later = buildHttp(db, { now: () => Date.now() + 11_000 });
    await expect401(await later.app.request('/tick', { method: 'POST', body, headers }), /outside the 300 s tolerance/);
    expect(later.tick.calls.length).toBe(0);
    await later.client.close();
  });

  it('refuses a signature whose body was tampered with', async () => {
    const headers = await signRequest({ secret: SECRET, method: 'POST', path: '/tick', body: '{"budgetMs":1000}' });
    const res = await h.app.request('/tick', { method: 'POST', body: '{"budgetMs":9000}', headers });
    await expect401(res, /does not match/);
  });

  it('refuses a signature made for another path', async () => {
    const headers = await signRequest({ secret: SECRET, method: 'POST', path: '/jobs', body: '' });
    await expect401(await h.app.request('/tick', { method: 'POST', headers }), /does not match/);
  });

  it('refuses malformed signature headers', async () => {
    const res = await h.app.request('/tick', {
      method: 'POST',
      headers: { 'x-workhorse-timestamp': String(nowSec()), 'x-workhorse-signature': 'sha256=abc' },
    });
    await expect401(res, /malformed signature headers/);
  });

  it('does not accept the API bearer token (ticks are signature-only)', async () => {
    const before = h.tick.calls.length;
    const res = await h.app.request('/tick', { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
    await expect401(res, /^missing x-workhorse-timestamp or x-workhorse-signature header: POST \/tick takes a signed request only, never a bearer token$/);
    expect(h.tick.calls.length).toBe(before);
  });

  it('refuses everything when the server has no signing secret', async () => {
    const bare = buildHttp(db, { signingSecrets: [] });
    await expect401(await signed(bare.app, 'POST', '/tick', ''), /not configured/);
    expect(bare.tick.calls.length).toBe(0);
    await bare.client.close();
  });

  it('lets a signed body shorten the budget but never lengthen it', async () => {
    await signed(h.app, 'POST', '/tick', '{"budgetMs":1500}');
    expect(h.tick.calls.at(-1)).toEqual({ budgetMs: 1500 });
    await signed(h.app, 'POST', '/tick', '{"budgetMs":60000}');
    expect(h.tick.calls.at(-1)).toEqual({ budgetMs: 8000 });
  });

  it('bounds the budget by the Lambda invocation time left', async () => {
    const path = '/tick';
    const headers = await signRequest({ secret: SECRET, method: 'POST', path, body: '' });
    const lambdaContext = { getRemainingTimeInMillis: () => 4000 };
    const res = await h.app.request(path, { method: 'POST', headers }, { lambdaContext } as never);
    expect(res.status).toBe(200);
    expect(h.tick.calls.at(-1)).toEqual({ budgetMs: 3000 });
  });

  it('answers 503 without running a tick when the Lambda invocation is nearly out of time', async () => {
    const before = h.tick.calls.length;
    const headers = await signRequest({ secret: SECRET, method: 'POST', path: '/tick', body: '' });
    const lambdaContext = { getRemainingTimeInMillis: () => 1050 };
    const res = await h.app.request('/tick', { method: 'POST', headers }, { lambdaContext } as never);
    expect(res.status).toBe(503);
    expect(((await res.json()) as ErrorJson).error.code).toBe('no_time_left');
    expect(h.tick.calls.length).toBe(before);
  });

  it('answers a signed but invalid body with 400 naming the field, and runs nothing', async () => {
    const before = h.tick.calls.length;
    const res = await signed(h.app, 'POST', '/tick', '{"budgetMs":"soon","extra":1}');
    expect(res.status).toBe(400);
    const body = (await res.json()) as ErrorJson;
    expect(body.error.code).toBe('validation_failed');
    expect(body.error.issues!.map((i) => i.path)).toEqual(expect.arrayContaining([['budgetMs']]));
    expect(h.tick.calls.length).toBe(before);
  });

  it('answers a tick failure with 500 and no internals', async () => {
    const failing = buildHttp(db, {
      tick: async () => {
        throw new Error('connect ECONNREFUSED 10.0.0.7:5432 password=hunter2');
      },
    });
    const res = await signed(failing.app, 'POST', '/tick', '');
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ error: { code: 'internal', message: 'internal error' } });
    expect(text).not.toMatch(/ECONNREFUSED|hunter2/);
    await failing.client.close();
  });

  it('answers GET /tick with a JSON 405 that allows POST', async () => {
    const before = h.tick.calls.length;
    const res = await h.app.request('/tick');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(((await res.json()) as ErrorJson).error.code).toBe('method_not_allowed');
    expect(h.tick.calls.length).toBe(before);
  });
});

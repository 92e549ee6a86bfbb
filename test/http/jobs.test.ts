// The jobs API through app.request() against real PostgreSQL: enqueue (one,
// batch, dedupe), read, list with pagination, cancel, retry, and every 4xx
// with its JSON body. A refused request never writes a row.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import testApp from './fixtures/app.js';
import { buildHttp, countJobs, signed, withToken, type ErrorJson, type HttpHarness } from './helpers.js';

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

beforeEach(async () => {
  await db.pool.query('truncate workhorse.jobs cascade');
});

async function errorOf(res: Response, status: number): Promise<ErrorJson['error']> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/application\/json/);
  const body = (await res.json()) as ErrorJson;
  expect(Object.keys(body)).toEqual(['error']);
  return body.error;
}

const email = { type: 'email.send', payload: { to: 'ada@example.com', subject: 'hi' } };

/** Runs every ready job of the fixture app once, with a real worker. */
async function runReadyJobs(): Promise<void> {
  const worker = new Worker(h.client, { queues: ['default', 'reports'], listen: false, heartbeatMs: 1000 });
  testApp.configure(worker);
  while (await worker.runOnce());
  await worker.stop();
}

describe('POST /jobs', () => {
  it('enqueues one job and answers 201 with its id', async () => {
    const res = await withToken(h.app, 'POST', '/jobs', email);
    expect(res.status).toBe(201);
    const body = (await res.json()) as { id: string; created: boolean };
    expect(body).toEqual({ id: expect.stringMatching(/^[0-9]+$/), created: true });
    const row = await db.pool.query('select type, queue, status, payload from workhorse.jobs where id = $1', [body.id]);
    expect(row.rows[0]).toEqual({ type: 'email.send', queue: 'default', status: 'ready', payload: email.payload });
  });

  it('enqueues a batch in order and returns every id', async () => {
    const res = await withToken(h.app, 'POST', '/jobs', {
      jobs: [email, { type: 'report.build', payload: { account: 'acme', rows: 3 }, priority: -5 }],
    });
    expect(res.status).toBe(201);
    const { jobs } = (await res.json()) as { jobs: { id: string; created: boolean }[] };
    expect(jobs).toHaveLength(2);
    const rows = await db.pool.query('select id::text, type, queue, priority from workhorse.jobs order by id');
    expect(rows.rows).toEqual([
      { id: jobs[0]!.id, type: 'email.send', queue: 'default', priority: 0 },
      { id: jobs[1]!.id, type: 'report.build', queue: 'reports', priority: -5 },
    ]);
  });

  it('honours dedupeKey: a second enqueue answers 200 with the first job', async () => {
    const first = (await (await withToken(h.app, 'POST', '/jobs', { ...email, dedupeKey: 'welcome:42' })).json()) as { id: string };
    const again = await withToken(h.app, 'POST', '/jobs', { ...email, payload: { to: 'bob@example.com', subject: 'x' }, dedupeKey: 'welcome:42' });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ id: first.id, created: false });
    expect(await countJobs(db)).toBe(1);
  });

  it('applies runAt (ISO 8601), queue and maxAttempts options', async () => {
    const runAt = '2031-01-02T03:04:05.000Z';
    const res = await withToken(h.app, 'POST', '/jobs', { ...email, runAt, queue: 'mail', maxAttempts: 7 });
    const { id } = (await res.json()) as { id: string };
    const job = (await (await withToken(h.app, 'GET', `/jobs/${id}`)).json()) as Record<string, unknown>;
    expect(job).toMatchObject({ runAt, queue: 'mail', maxAttempts: 7, status: 'ready' });
  });

  it('answers a payload failing its schema with 400 and the issue path, writing nothing', async () => {
    const e = await errorOf(await withToken(h.app, 'POST', '/jobs', { type: 'email.send', payload: { to: 'nope', subject: '' } }), 400);
    expect(e.code).toBe('validation_failed');
    expect(e.issues!.map((i) => i.path)).toEqual([
      ['payload', 'to'],
      ['payload', 'subject'],
    ]);
    expect(await countJobs(db)).toBe(0);
  });

  it('rejects a whole batch when one item is bad, naming its index', async () => {
    const e = await errorOf(
      await withToken(h.app, 'POST', '/jobs', { jobs: [email, { type: 'report.build', payload: { account: 'a', rows: -1 } }] }),
      400,
    );
    expect(e.issues!.map((i) => i.path)).toEqual([['jobs', 1, 'payload', 'rows']]);
    expect(await countJobs(db)).toBe(0);
  });

  it('answers an unknown job type with 400 unknown_job_type', async () => {
    const e = await errorOf(await withToken(h.app, 'POST', '/jobs', { type: 'sms.send', payload: {} }), 400);
    expect(e.code).toBe('unknown_job_type');
    expect(e.message).toMatch(/sms\.send/);
    // The fix is the server's app module, not the caller's createClient.
    expect(e.message).toMatch(/app module/);
    expect(e.message).not.toMatch(/createClient/);
    expect(await countJobs(db)).toBe(0);
    // In a batch, the item is named.
    const jobs = [{ type: 'email.send', payload: { to: 'a@example.com', subject: 'x' } }, { type: 'sms.send', payload: {} }];
    const batch = await errorOf(await withToken(h.app, 'POST', '/jobs', { jobs }), 400);
    expect(batch.code).toBe('unknown_job_type');
    expect(batch.message).toContain('(at jobs.1.type)');
    expect(await countJobs(db)).toBe(0);
  });

  it('says a server started without an app module has no job types', async () => {
    const bare = buildHttp(db, { app: undefined });
    try {
      const e = await errorOf(await withToken(bare.app, 'POST', '/jobs', { type: 'email.send', payload: {} }), 400);
      expect(e.code).toBe('unknown_job_type');
      expect(e.message).toMatch(/this server has no job types: start it with the app module .*--app/);
    } finally {
      await bare.client.close();
    }
  });

  it('answers bad options with 400 naming each field', async () => {
    const cases: [unknown, (string | number)[]][] = [
      [{ ...email, delayMs: -1 }, ['delayMs']],
      [{ ...email, runAt: '2031-01-02T03:04:05Z', delayMs: 10 }, ['delayMs']],
      [{ ...email, runAt: 'tomorrow' }, ['runAt']],
      [{ ...email, priority: 1.5 }, ['priority']],
      // A schedule's cadence key: the job would take that cadence's place.
      [{ ...email, dedupeKey: 'slot:nightly:2026-12-06T02:00:00.000Z' }, ['dedupeKey']],
      [{ ...email, colour: 'red' }, []],
      [{ payload: {} }, ['type']],
      [{ jobs: [] }, ['jobs']],
      [{ jobs: Array.from({ length: 1001 }, () => email) }, ['jobs']],
      [[email], []],
    ];
    for (const [body, path] of cases) {
      const e = await errorOf(await withToken(h.app, 'POST', '/jobs', body), 400);
      expect(e.code, JSON.stringify(body).slice(0, 80)).toBe('validation_failed');
      expect(e.issues!.map((i) => i.path)).toContainEqual(path);
    }
    expect(await countJobs(db)).toBe(0);
  });

  it('answers malformed JSON and an empty body with 400', async () => {
    const bad = await errorOf(await withToken(h.app, 'POST', '/jobs', '{"type": "email.send",'), 400);
    expect(bad.message).toMatch(/not valid JSON/);
    const empty = await errorOf(await withToken(h.app, 'POST', '/jobs', ''), 400);
    expect(empty.message).toMatch(/body is required/);
    expect(await countJobs(db)).toBe(0);
  });

  it('answers a body over the limit with 413, with or without Content-Length', async () => {
    const small = buildHttp(db, { maxBodyBytes: 2048 });
    const big = JSON.stringify({ type: 'report.build', payload: { account: 'x'.repeat(3000), rows: 1 } });
    const streamed = await errorOf(await withToken(small.app, 'POST', '/jobs', big), 413);
    expect(streamed).toEqual({ code: 'body_too_large', message: 'request body is over the limit of 2048 bytes' });
    const declared = await small.app.request('/jobs', {
      method: 'POST',
      body: big,
      headers: { authorization: `Bearer ${'api-token-0123456789abcdef'}`, 'content-length': String(big.length) },
    });
    expect((await errorOf(declared, 413)).code).toBe('body_too_large');
    expect(await countJobs(db)).toBe(0);
    await small.client.close();
  });

  it('answers a payload over the per-job limit with 413 payload_too_large', async () => {
    const res = await withToken(h.app, 'POST', '/jobs', { type: 'report.build', payload: { account: 'x'.repeat(300 * 1024), rows: 1 } });
    const e = await errorOf(res, 413);
    expect(e.code).toBe('payload_too_large');
    expect(await countJobs(db)).toBe(0);
  });

  it('names the batch item whose payload is over the limit', async () => {
    const big = { type: 'report.build', payload: { account: 'x'.repeat(300 * 1024), rows: 1 } };
    const e = await errorOf(await withToken(h.app, 'POST', '/jobs', { jobs: [email, big] }), 413);
    expect(e.code).toBe('payload_too_large');
    expect(e.message).toMatch(/^payload of job type "report\.build" \(jobs\.1\) is \d+ bytes; the limit is 262144 bytes$/);
    expect(await countJobs(db)).toBe(0);
  });
});

describe('GET /jobs and /jobs/:id', () => {
  it('returns one job by id, 404 for a missing one, 400 for a malformed id', async () => {
    const { id } = (await (await withToken(h.app, 'POST', '/jobs', email)).json()) as { id: string };
    const job = (await (await withToken(h.app, 'GET', `/jobs/${id}`)).json()) as Record<string, unknown>;
    expect(job).toMatchObject({ id, type: 'email.send', status: 'ready', payload: email.payload, attempt: 0 });
    const missing = await errorOf(await withToken(h.app, 'GET', '/jobs/999999999'), 404);
    expect(missing).toEqual({ code: 'not_found', message: 'job 999999999 not found in namespace "default"' });
    const bad = await errorOf(await withToken(h.app, 'GET', '/jobs/abc'), 400);
    expect(bad.issues!.map((i) => i.path)).toEqual([['id']]);
    // It takes no query parameter, as the list routes take none they do not know.
    const query = await errorOf(await withToken(h.app, 'GET', `/jobs/${id}?x=1`), 400);
    expect(query.issues!.map((i) => i.message).join()).toMatch(/Unrecognized key/);
  });

  it('lists with filters and pages with a keyset cursor', async () => {
    const items = [
      ...Array.from({ length: 5 }, (_, i) => ({ type: 'report.build', payload: { account: `a${i}`, rows: i } })),
      email,
    ];
    await withToken(h.app, 'POST', '/jobs', { jobs: items });
    const page1 = (await (await withToken(h.app, 'GET', '/jobs?queue=reports&limit=2')).json()) as {
      jobs: { id: string; queue: string }[];
      nextCursor: string | null;
    };
    expect(page1.jobs).toHaveLength(2);
    expect(page1.jobs.every((j) => j.queue === 'reports')).toBe(true);
    const seen = [...page1.jobs.map((j) => j.id)];
    let cursor = page1.nextCursor;
    while (cursor) {
      const page = (await (await withToken(h.app, 'GET', `/jobs?queue=reports&limit=2&cursor=${cursor}`)).json()) as typeof page1;
      seen.push(...page.jobs.map((j) => j.id));
      cursor = page.nextCursor;
    }
    expect(new Set(seen).size).toBe(5);
    // A full last page says it is the last: docs/api.md's null, not a cursor to an empty page.
    const whole = (await (await withToken(h.app, 'GET', '/jobs?queue=reports&limit=5')).json()) as typeof page1;
    expect(whole.jobs).toHaveLength(5);
    expect(whole.nextCursor).toBeNull();
    const byType = (await (await withToken(h.app, 'GET', '/jobs?type=email.send&status=ready')).json()) as typeof page1;
    expect(byType.jobs).toHaveLength(1);
  });

  it('answers bad query parameters with 400 naming each', async () => {
    for (const [q, path] of [
      ['status=bogus', ['status']],
      ['limit=0', ['limit']],
      ['limit=ten', ['limit']],
      ['cursor=-3', ['cursor']],
      ['sort=id', []],
      ['status=ready&status=failed', ['status']],
    ] as const) {
      const e = await errorOf(await withToken(h.app, 'GET', `/jobs?${q}`), 400);
      expect(e.issues!.map((i) => i.path), q).toContainEqual(path);
    }
  });
});

describe('POST /jobs/:id/cancel and /retry', () => {
  it('cancels a ready job, and cancelling it again is harmless', async () => {
    const { id } = (await (await withToken(h.app, 'POST', '/jobs', email)).json()) as { id: string };
    const res = await withToken(h.app, 'POST', `/jobs/${id}/cancel`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id, status: 'cancelled' });
    expect((await withToken(h.app, 'POST', `/jobs/${id}/cancel`)).status).toBe(200);
  });

  it('retries a cancelled job, making it ready again', async () => {
    const { id } = (await (await withToken(h.app, 'POST', '/jobs', email)).json()) as { id: string };
    await withToken(h.app, 'POST', `/jobs/${id}/cancel`);
    const res = await withToken(h.app, 'POST', `/jobs/${id}/retry`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id, status: 'ready' });
  });

  it('answers 409 for cancelling or retrying a succeeded job', async () => {
    const { id } = (await (await withToken(h.app, 'POST', '/jobs', email)).json()) as { id: string };
    await runReadyJobs();
    const cancel = await errorOf(await withToken(h.app, 'POST', `/jobs/${id}/cancel`), 409);
    expect(cancel.code).toBe('conflict');
    expect(cancel.message).toMatch(/succeeded/);
    const retry = await errorOf(await withToken(h.app, 'POST', `/jobs/${id}/retry`), 409);
    expect(retry.code).toBe('conflict');
    const job = (await (await withToken(h.app, 'GET', `/jobs/${id}`)).json()) as Record<string, unknown>;
    expect(job).toMatchObject({ status: 'succeeded', result: { delivered: 'ada@example.com' } });
  });

  it('answers 404 for a job that does not exist', async () => {
    expect((await errorOf(await withToken(h.app, 'POST', '/jobs/424242/cancel'), 404)).code).toBe('not_found');
    expect((await errorOf(await withToken(h.app, 'POST', '/jobs/424242/retry'), 404)).code).toBe('not_found');
  });
});

describe('API authentication', () => {
  it('answers 401 without credentials, with a wrong or malformed token, and writes nothing', async () => {
    const none = await errorOf(await h.app.request('/jobs', { method: 'POST', body: JSON.stringify(email) }), 401);
    expect(none.message).toMatch(/missing credentials/);
    expect((await errorOf(await withToken(h.app, 'POST', '/jobs', email, 'wrong-token-0123456789'), 401)).message).toMatch(/invalid bearer/);
    const basic = await h.app.request('/jobs', { method: 'POST', body: JSON.stringify(email), headers: { authorization: 'Basic dTpw' } });
    expect((await errorOf(basic, 401)).message).toMatch(/malformed Authorization/);
    expect(await countJobs(db)).toBe(0);
  });

  it('tells a caller of a server with no API tokens that none is configured, not to send one', async () => {
    const bare = buildHttp(db, { apiToken: undefined });
    try {
      const none = await errorOf(await bare.app.request('/jobs', { method: 'POST', body: JSON.stringify(email) }), 401);
      expect(none.message).toMatch(/no API tokens configured \(set WORKHORSE_API_TOKEN or WORKHORSE_API_TOKENS\)/);
      expect(none.message).not.toMatch(/send "Authorization/);
      expect(await countJobs(db)).toBe(0);
    } finally {
      await bare.client.close();
    }
  });

  it('accepts the HMAC signature instead of the token when signatures are given scopes, over path and query', async () => {
    const s = buildHttp(db, { signedScopes: ['enqueue', 'read'] });
    const body = JSON.stringify(email);
    expect((await signed(s.app, 'POST', '/jobs', body)).status).toBe(201);
    expect((await signed(s.app, 'GET', '/jobs?limit=5')).status).toBe(200);
    const { signRequest } = await import('../../src/signing/index.js');
    const forOtherQuery = await signRequest({ secret: 'current-secret-0123456789', method: 'GET', path: '/jobs?limit=5' });
    expect((await errorOf(await s.app.request('/jobs?limit=500', { headers: forOtherQuery }), 401)).message).toMatch(/does not match/);
    await s.client.close();
  });

  it('refuses a signed request on the API routes by default: the tick secret is for POST /tick', async () => {
    const e = await errorOf(await signed(h.app, 'POST', '/jobs', JSON.stringify(email)), 401);
    expect(e.message).toMatch(/POST \/tick only/);
    expect(await countJobs(db)).toBe(0);
  });

  it('refuses bearer tokens when the server has none configured', async () => {
    const noToken = buildHttp(db, { apiToken: undefined });
    expect((await errorOf(await withToken(noToken.app, 'GET', '/jobs'), 401)).message).toMatch(/not configured/);
    await noToken.client.close();
  });

  it('answers an unknown route with a JSON 404', async () => {
    const e = await errorOf(await withToken(h.app, 'GET', '/nope'), 404);
    expect(e).toEqual({ code: 'not_found', message: 'no route for GET /nope' });
  });
});

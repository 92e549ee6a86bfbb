// Scoped credentials: every API route needs one scope, a token without it
// gets 403 `forbidden` and nothing runs; WORKHORSE_API_TOKEN holds every
// scope; the tick's HMAC secret works on POST /tick only unless signatures
// are given scopes; the token list is parsed once from the environment and
// refuses bad entries without echoing secrets. Pausing a queue that does not
// exist is 404 and creates no row.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadHttpEnvConfig } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';
import { SCOPES, type Scope } from '../../src/credentials/scopes.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { buildHttp, countJobs, signed, TOKEN, withToken, type ErrorJson, type HttpHarness } from './helpers.js';

const READ = 'read-token-0123456789abcdef';
const ENQUEUE = 'enqueue-token-0123456789abc';
const ADMIN = 'admin-token-0123456789abcdef';
const DECIDE = 'decide-token-0123456789abcd';
const SIGNAL = 'signal-token-0123456789abcd';
const TOKEN_OF: Record<Scope, string> = { read: READ, enqueue: ENQUEUE, admin: ADMIN, decide: DECIDE, signal: SIGNAL };

let db: TestDatabase;
let h: HttpHarness;

beforeAll(async () => {
  db = await createTestDatabase();
  h = buildHttp(db, {
    apiTokens: [
      { name: 'dashboard', token: READ, scopes: ['read'] },
      { name: 'edge', token: ENQUEUE, scopes: ['enqueue'] },
      { name: 'ops', token: ADMIN, scopes: ['admin'] },
      { name: 'approvers', token: DECIDE, scopes: ['decide'] },
      { name: 'webhooks', token: SIGNAL, scopes: ['signal'] },
    ],
  });
});

afterAll(async () => {
  await h.client.close();
  await db.drop();
});

const email = { type: 'email.send', payload: { to: 'ada@example.com', subject: 'hi' } };

/** Every API route, the scope it needs (or any of several), and a request that is valid for it. */
const routes: { method: string; path: string; scope: Scope | Scope[]; body?: unknown }[] = [
  { method: 'POST', path: '/jobs', scope: 'enqueue', body: email },
  { method: 'GET', path: '/jobs', scope: 'read' },
  { method: 'GET', path: '/jobs/1', scope: 'read' },
  { method: 'POST', path: '/jobs/1/cancel', scope: 'admin' },
  { method: 'POST', path: '/jobs/1/retry', scope: 'admin' },
  { method: 'GET', path: '/queues', scope: 'read' },
  { method: 'POST', path: '/queues/reports/pause', scope: 'admin' },
  { method: 'POST', path: '/queues/reports/resume', scope: 'admin' },
  { method: 'GET', path: '/workers', scope: 'read' },
  { method: 'POST', path: '/workers/ghost/pause', scope: 'admin' },
  { method: 'POST', path: '/workers/ghost/resume', scope: 'admin' },
  { method: 'GET', path: '/schedules', scope: 'read' },
  { method: 'GET', path: '/outbox', scope: 'read' },
  { method: 'POST', path: '/outbox/retry', scope: 'admin', body: { ids: ['1'] } },
  { method: 'POST', path: '/outbox/discard', scope: 'admin', body: { ids: ['1'] } },
  { method: 'GET', path: '/alerts', scope: 'read' },
  { method: 'GET', path: '/decisions', scope: ['read', 'decide'] },
  { method: 'POST', path: '/jobs/1/decisions/approve', scope: 'decide', body: { choice: 'yes', by: 'ada' } },
  { method: 'POST', path: '/jobs/1/signals/paid', scope: 'signal', body: { payload: { amount: 1 } } },
  { method: 'POST', path: '/signals/order%3A1/paid', scope: 'signal', body: { payload: { amount: 1 } } },
];

async function errorOf(res: Response, status: number): Promise<ErrorJson['error']> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return (JSON.parse(text) as ErrorJson).error;
}

async function policyRows(): Promise<number> {
  return (await db.pool.query<{ n: number }>('select count(*)::int as n from workhorse.queues')).rows[0]!.n;
}

describe('each route needs its scope', () => {
  it('names the scopes of every route from the known scopes, each used', () => {
    expect(new Set(routes.flatMap((r) => r.scope))).toEqual(new Set(SCOPES));
  });

  it.each(routes)('$method $path: 403 for tokens without "$scope", runs for one with it', async ({ method, path, scope, body }) => {
    const anyOf = typeof scope === 'string' ? [scope] : scope;
    const before = { jobs: await countJobs(db), queues: await h.client.admin.listQueues() };
    for (const other of SCOPES.filter((s) => !anyOf.includes(s))) {
      const e = await errorOf(await withToken(h.app, method, path, body, TOKEN_OF[other]), 403);
      expect(e.code).toBe('forbidden');
      expect(e.message).toContain(`${anyOf.map((s) => `"${s}"`).join(' or ')} scope`);
    }
    // Nothing ran: no job, no pause.
    expect(await countJobs(db)).toBe(before.jobs);
    expect(await h.client.admin.listQueues()).toEqual(before.queues);
    for (const one of anyOf) {
      const allowed = await withToken(h.app, method, path, body, TOKEN_OF[one]);
      expect([401, 403], `${method} ${path} with "${one}"`).not.toContain(allowed.status);
      expect(allowed.status).toBeLessThan(500);
    }
  });

  it('gives WORKHORSE_API_TOKEN (apiToken) every scope', async () => {
    for (const { method, path, body } of routes) {
      const res = await withToken(h.app, method, path, body, TOKEN);
      expect([401, 403], `${method} ${path}`).not.toContain(res.status);
    }
  });
});

describe('the tick secret', () => {
  it('is refused on every API route by default', async () => {
    for (const { method, path, body } of routes) {
      const e = await errorOf(await signed(h.app, method, path, body === undefined ? undefined : JSON.stringify(body)), 401);
      expect(e.message, `${method} ${path}`).toMatch(/POST \/tick only/);
      expect(e.message, `${method} ${path}`).toMatch(/scope \(WORKHORSE_SIGNED_SCOPES\)$/);
    }
  });

  it('acts with the configured signedScopes, and only those', async () => {
    const s = buildHttp(db, { signedScopes: ['enqueue'] });
    try {
      const jobs = await countJobs(db);
      expect((await signed(s.app, 'POST', '/jobs', JSON.stringify({ ...email, dedupeKey: 'signed-1' }))).status).toBe(201);
      expect(await countJobs(db)).toBe(jobs + 1);
      const e = await errorOf(await signed(s.app, 'POST', '/jobs/1/cancel'), 403);
      expect(e.message).toMatch(/carry the scopes enqueue; this route needs "admin"/);
      // A bad signature with the right scope is still a 401.
      const forged = await s.app.request('/jobs', {
        method: 'POST',
        body: JSON.stringify(email),
        headers: { 'x-workhorse-timestamp': String(Math.floor(Date.now() / 1000)), 'x-workhorse-signature': `v1=${'0'.repeat(64)}` },
      });
      expect((await errorOf(forged, 401)).message).toMatch(/does not match/);
    } finally {
      await s.client.close();
    }
  });

  it('still runs POST /tick, where a bearer token never does', async () => {
    expect((await signed(h.app, 'POST', '/tick', '')).status).toBe(200);
    expect((await errorOf(await withToken(h.app, 'POST', '/tick', undefined, TOKEN), 401)).code).toBe('unauthorized');
  });
});

describe('pausing a queue', () => {
  it('answers 404 for a queue that holds no jobs, has no policy and no job type uses, and creates no row', async () => {
    const rows = await policyRows();
    for (const name of ['no-such-queue', 'q1', 'q2']) {
      const e = await errorOf(await withToken(h.app, 'POST', `/queues/${name}/pause`, undefined, ADMIN), 404);
      expect(e.message).toMatch(/does not exist/);
    }
    expect((await errorOf(await withToken(h.app, 'POST', '/queues/no-such-queue/resume', undefined, ADMIN), 404)).code).toBe('not_found');
    expect(await policyRows()).toBe(rows);
  });

  it('pauses a queue a job type uses before any job exists, one with jobs, and one given limits explicitly', async () => {
    expect((await withToken(h.app, 'POST', '/queues/blobs/pause', undefined, ADMIN)).status).toBe(200);
    await withToken(h.app, 'POST', '/jobs', { ...email, queue: 'adhoc' }, ENQUEUE);
    expect((await withToken(h.app, 'POST', '/queues/adhoc/pause', undefined, ADMIN)).status).toBe(200);
    await h.client.admin.setQueueLimits('limited', { concurrencyLimit: 2 });
    expect((await withToken(h.app, 'POST', '/queues/limited/pause', undefined, ADMIN)).status).toBe(200);
    const paused = (await h.client.admin.listQueues()).filter((q) => q.paused).map((q) => q.name);
    expect(paused).toEqual(expect.arrayContaining(['blobs', 'adhoc', 'limited']));
  });

  it('refuses a queue whose jobs have all finished, as `workhorse queues pause` does (telling it from a typo would walk the jobs table)', async () => {
    const { id } = await h.client.enqueue(email.type, email.payload, { queue: 'nightly' });
    await h.client.cancel(id);
    expect((await errorOf(await withToken(h.app, 'POST', '/queues/nightly/pause', undefined, ADMIN), 404)).code).toBe('not_found');
    expect((await h.client.admin.listQueues()).some((q) => q.name === 'nightly')).toBe(false);
  });
});

describe('WORKHORSE_API_TOKENS', () => {
  const base = { DATABASE_URL: 'postgres://u@127.0.0.1:5432/db' };

  it('parses named tokens with their scopes, alongside WORKHORSE_API_TOKEN with every scope', () => {
    const c = loadHttpEnvConfig({
      ...base,
      WORKHORSE_API_TOKEN: TOKEN,
      WORKHORSE_API_TOKENS: JSON.stringify([{ name: 'dashboard', token: READ, scopes: ['read'] }, { token: ENQUEUE, scopes: ['enqueue', 'read'] }]),
      WORKHORSE_SIGNED_SCOPES: 'enqueue, read',
    });
    expect(c.apiTokens).toEqual([
      { name: 'WORKHORSE_API_TOKEN', token: TOKEN, scopes: [...SCOPES] },
      { name: 'dashboard', token: READ, scopes: ['read'] },
      { name: 'token-2', token: ENQUEUE, scopes: ['enqueue', 'read'] },
    ]);
    expect(c.signedScopes).toEqual(['enqueue', 'read']);
    expect(loadHttpEnvConfig(base).signedScopes).toEqual([]);
  });

  it.each([
    ['not JSON', `[{"token":"${READ}"`, /WORKHORSE_API_TOKENS: not valid JSON/],
    ['an unknown scope', JSON.stringify([{ token: READ, scopes: ['root'] }]), /WORKHORSE_API_TOKENS\.0\.scopes\.0: a scope is one of read, enqueue, admin/],
    ['no scopes', JSON.stringify([{ token: READ, scopes: [] }]), /give at least one scope/],
    ['a short token', JSON.stringify([{ token: 'short', scopes: ['read'] }]), /at least 16 characters/],
    ['an unknown key', JSON.stringify([{ token: READ, scopes: ['read'], expires: 1 }]), /expires/],
    ['a token listed twice', JSON.stringify([{ token: READ, scopes: ['read'] }, { token: READ, scopes: ['admin'] }]), /the same token is configured twice/],
  ])('refuses %s with a ConfigError that does not echo the token', (_what, value, message) => {
    let err: unknown;
    try {
      loadHttpEnvConfig({ ...base, WORKHORSE_API_TOKENS: value });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).not.toContain(READ);
  });

  it('refuses an unknown signed scope', () => {
    expect(() => loadHttpEnvConfig({ ...base, WORKHORSE_SIGNED_SCOPES: 'read,tick' })).toThrow(/WORKHORSE_SIGNED_SCOPES\.1: a scope is one of/);
  });
});

// Signing in to the dashboard and acting from it, over a real socket: the
// bearer token is exchanged for a signed session cookie (HttpOnly, Secure,
// SameSite=Strict, __Host-) that carries its name, scopes and expiry but
// never the token; a forged, expired or revoked cookie is no session; every
// action needs `admin`, and from a session also this site's page and its
// CSRF token; every response carries the strict Content-Security-Policy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadHttpEnvConfig } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';
import { CONTENT_SECURITY_POLICY } from '../../src/http/ui/securityHeaders.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { ADMIN_TOKEN, csrfOf, ENQUEUE_TOKEN, READ_TOKEN, sessionCookie, SESSION_SECRET, startDashboard, type Dashboard } from './support/dashboard.js';

let db: TestDatabase;
let d: Dashboard;

beforeAll(async () => {
  db = await createTestDatabase();
  d = await startDashboard(db);
  await d.client.enqueue('report.build', { account: 'acme', rows: 3 });
});

afterAll(async () => {
  await d?.close();
  await db?.drop();
});

const form = (fields: Record<string, string>) => new URLSearchParams(fields);
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

async function paused(queue: string): Promise<boolean> {
  const r = await db.pool.query<{ paused: boolean }>('select paused from workhorse.queues where namespace = $1 and name = $2', ['default', queue]);
  return r.rows[0]?.paused ?? false;
}

function post(path: string, headers: Record<string, string>, fields: Record<string, string> = {}): Promise<Response> {
  return fetch(`${d.url}${path}`, { method: 'POST', redirect: 'manual', headers: { ...FORM, origin: d.url, ...headers }, body: form(fields) });
}

describe('reading', () => {
  it('sends a browser without credentials to the sign-in page, and back afterwards', async () => {
    const res = await fetch(`${d.url}/ui/queues?done=queue-paused&subject=x`, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/ui/sign-in?next=%2Fui%2Fqueues%3Fdone%3Dqueue-paused%26subject%3Dx');
  });

  it('renders GET /ui for a read-scoped bearer header (scripted checks), with no action buttons', async () => {
    const res = await fetch(`${d.url}/ui`, { headers: { authorization: `Bearer ${READ_TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const page = await res.text();
    expect(page).toContain('<h1>Namespace</h1>');
    expect(page).toMatch(/<a href="\/ui\/jobs\/\d+" id="job-\d+">#\d+<\/a> <span class="muted small">report\.build<\/span>/);
    const queues = await (await fetch(`${d.url}/ui/queues`, { headers: { authorization: `Bearer ${READ_TOKEN}` } })).text();
    expect(queues).toContain('data-queue="reports"');
    expect(queues).not.toContain('Pause<span');
  });

  it('answers a wrong bearer token 401 and one without `read` 403, as pages', async () => {
    const wrong = await fetch(`${d.url}/ui?status=failed`, { headers: { authorization: 'Bearer not-a-token-0123456789' } });
    expect(wrong.status).toBe(401);
    const page = await wrong.text();
    expect(page).toContain('invalid bearer token');
    // Its sign-in link comes back here.
    expect(page).toContain('<a href="/ui/sign-in?next=%2Fui%3Fstatus%3Dfailed">Sign in</a>');
    // An action posted once the session is gone (no credentials): back to the page it was posted from.
    const action = await post('/ui/queues/reports/pause', { referer: `${d.url}/ui/queues` });
    expect(action.status).toBe(401);
    expect(await action.text()).toContain('<a href="/ui/sign-in?next=%2Fui%2Fqueues">Sign in</a>');
    const edge = await fetch(`${d.url}/ui`, { headers: { authorization: `Bearer ${ENQUEUE_TOKEN}` } });
    expect(edge.status).toBe(403);
    expect(await edge.text()).toContain('token &quot;edge&quot; lacks the &quot;read&quot; scope');
  });

  it('answers the live refresh with the live region only, and 401 JSON once signed out', async () => {
    const live = await fetch(`${d.url}/ui`, { headers: { authorization: `Bearer ${READ_TOKEN}`, 'x-workhorse-live': '1' } });
    const text = await live.text();
    expect(live.status).toBe(200);
    expect(text).not.toContain('<html');
    expect(text).toContain('id="ns-summary"');
    const gone = await fetch(`${d.url}/ui`, { headers: { 'x-workhorse-live': '1' } });
    expect(gone.status).toBe(401);
    expect(((await gone.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
  });
});

describe('signing in', () => {
  it('exchanges the token for an HttpOnly, Secure, SameSite=Strict __Host- cookie that does not carry it', async () => {
    const res = await post('/ui/sign-in', {}, { token: ADMIN_TOKEN, next: '/ui/queues' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/ui/queues');
    const set = res.headers.get('set-cookie')!;
    expect(set).toMatch(/^__Host-workhorse-session=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+; Max-Age=28800; Path=\/; HttpOnly; Secure; SameSite=Strict$/);
    const value = set.split(';')[0]!.split('=')[1]!;
    const payload = JSON.parse(Buffer.from(value.split('.')[0]!, 'base64url').toString('utf8'));
    expect(payload).toMatchObject({ v: 1, name: 'ops', scopes: ['read', 'admin'] });
    expect(payload.exp * 1000).toBeGreaterThan(Date.now() + 7.9 * 3600_000);
    expect(value).not.toContain(ADMIN_TOKEN);
    expect(Buffer.from(value.split('.')[0]!, 'base64url').toString('utf8')).not.toContain(ADMIN_TOKEN);
    const page = await (await fetch(`${d.url}/ui/queues`, { headers: { cookie: set.split(';')[0]! } })).text();
    expect(page).toContain('ops <span class="small">(read, admin)</span>');
    expect(page).toContain('Pause<span class="visually-hidden"> queue reports</span>');
  });

  it('refuses a wrong token with 401 and a token without `read` with 403, and sets no cookie', async () => {
    const wrong = await post('/ui/sign-in', {}, { token: 'wrong-token-0123456789' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('set-cookie')).toBeNull();
    expect(await wrong.text()).toContain('That token is not valid on this server.');
    const edge = await post('/ui/sign-in', {}, { token: ENQUEUE_TOKEN });
    expect(edge.status).toBe(403);
    expect(edge.headers.get('set-cookie')).toBeNull();
  });

  it('refuses a malformed percent-escape in the form as such (it said the form was not UTF-8), with 400 and no cookie', async () => {
    const res = await fetch(`${d.url}/ui/sign-in`, { method: 'POST', redirect: 'manual', headers: { ...FORM, origin: d.url }, body: 'token=%ZZ' });
    expect(res.status).toBe(400);
    expect(res.headers.get('set-cookie')).toBeNull();
    expect(await res.text()).toContain('the form is not validly percent-encoded UTF-8');
  });

  it('refuses a query parameter on sign-in and sign-out, as every action does (400, no cookie)', async () => {
    const res = await post('/ui/sign-in?x=1', {}, { token: ADMIN_TOKEN });
    expect(res.status).toBe(400);
    expect(res.headers.get('set-cookie')).toBeNull();
    expect((await post('/ui/sign-out?next=/ui', {})).status).toBe(400);
  });

  it('refuses a sign-in posted from another site', async () => {
    for (const headers of [{ origin: 'https://evil.example' }, { 'sec-fetch-site': 'cross-site' }] as Record<string, string>[]) {
      const res = await post('/ui/sign-in', headers, { token: ADMIN_TOKEN });
      expect(res.status).toBe(403);
      expect(res.headers.get('set-cookie')).toBeNull();
    }
  });

  it('never redirects to another site after signing in', async () => {
    for (const next of ['https://evil.example/', '//evil.example', '/ui\\@evil', 'javascript:alert(1)', '/ui/../jobs/1', '/ui/%2e%2e/jobs/1', '/ui/.%2E/jobs/1', '/ui/x/../../jobs']) {
      const res = await post('/ui/sign-in', {}, { token: READ_TOKEN, next });
      expect(res.headers.get('location')).toBe('/ui');
    }
    // A dashboard path arrives where it was going, its dot segments resolved.
    for (const [next, to] of [['/ui/queues', '/ui/queues'], ['/ui/jobs/7?done=job-retried&subject=7', '/ui/jobs/7?done=job-retried&subject=7'], ['/ui/jobs/../queues', '/ui/queues']] as const) {
      const res = await post('/ui/sign-in', {}, { token: READ_TOKEN, next });
      expect(res.headers.get('location')).toBe(to);
    }
  });

  it('treats a tampered, expired or revoked cookie as no session', async () => {
    const cookie = await sessionCookie(d.url, READ_TOKEN);
    const [body, mac] = cookie.split('=')[1]!.split('.');
    const forged = JSON.parse(Buffer.from(body!, 'base64url').toString('utf8'));
    forged.scopes = ['read', 'admin'];
    const tampered = `__Host-workhorse-session=${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${mac}`;
    expect((await fetch(`${d.url}/ui`, { headers: { cookie: tampered }, redirect: 'manual' })).status).toBe(303);

    const later = await startDashboard(db, { now: () => Date.now() + 9 * 3600_000 });
    const revoked = await startDashboard(db, { apiTokens: [{ name: 'viewer', token: 'another-read-token-0123456789', scopes: ['read'] }] });
    const rotated = await startDashboard(db, { sessionSecret: 'another-session-secret-0123456789-abcdef' });
    try {
      for (const other of [later, revoked, rotated]) {
        expect((await fetch(`${other.url}/ui`, { headers: { cookie }, redirect: 'manual' })).status).toBe(303);
      }
    } finally {
      await Promise.all([later.close(), revoked.close(), rotated.close()]);
    }
  });

  it('gives a session no more than its token holds now', async () => {
    const cookie = await sessionCookie(d.url, ADMIN_TOKEN);
    const csrf = await csrfOf(d.url, cookie);
    const narrowed = await startDashboard(db, { apiTokens: [{ name: 'ops', token: ADMIN_TOKEN, scopes: ['read'] }] });
    try {
      const res = await fetch(`${narrowed.url}/ui/queues/reports/pause`, { method: 'POST', redirect: 'manual', headers: { ...FORM, cookie, origin: narrowed.url }, body: form({ csrf }) });
      expect(res.status).toBe(403);
      expect(await paused('reports')).toBe(false);
    } finally {
      await narrowed.close();
    }
  });

  it('signs out with the session\'s CSRF token', async () => {
    const cookie = await sessionCookie(d.url, READ_TOKEN);
    expect((await post('/ui/sign-out', { cookie }, { csrf: 'nope' })).status).toBe(403);
    const res = await post('/ui/sign-out', { cookie }, { csrf: await csrfOf(d.url, cookie) });
    expect(res.status).toBe(303);
    expect(res.headers.get('set-cookie')).toMatch(/^__Host-workhorse-session=; Max-Age=0; Path=\/; HttpOnly; Secure; SameSite=Strict$/);
  });

  it('refuses a sign-out posted from another site, with its valid CSRF token, saying so as every action does', async () => {
    const cookie = await sessionCookie(d.url, READ_TOKEN);
    const csrf = await csrfOf(d.url, cookie);
    for (const headers of [{ origin: 'http://evil.example' }, { 'sec-fetch-site': 'cross-site' }] as Record<string, string>[]) {
      const res = await post('/ui/sign-out', { cookie, ...headers }, { csrf });
      expect(res.status).toBe(403);
      expect(res.headers.get('set-cookie')).toBeNull();
      const page = await res.text();
      expect(page).toContain('this action came from another site');
      expect(page).not.toContain('CSRF token');
    }
  });
});

describe('acting', () => {
  it('pauses a queue from a session only with this site\'s page and the session\'s CSRF token', async () => {
    const cookie = await sessionCookie(d.url, ADMIN_TOKEN);
    const csrf = await csrfOf(d.url, cookie);
    const refused = [
      await post('/ui/queues/reports/pause', { cookie }),
      await post('/ui/queues/reports/pause', { cookie }, { csrf: 'forged' }),
      await post('/ui/queues/reports/pause', { cookie, origin: 'https://evil.example' }, { csrf }),
      await post('/ui/queues/reports/pause', { cookie, 'sec-fetch-site': 'same-site' }, { csrf }),
      await post('/ui/queues/reports/pause', { cookie: await sessionCookie(d.url, ADMIN_TOKEN) }, { csrf }),
    ];
    for (const res of refused) {
      expect(res.status).toBe(403);
      expect(await res.text()).toMatch(/CSRF token|another site/);
    }
    expect(await paused('reports')).toBe(false);

    const ok = await post('/ui/queues/reports/pause', { cookie, 'sec-fetch-site': 'same-origin' }, { csrf });
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe('/ui/queues?done=queue-paused&subject=reports');
    expect(await paused('reports')).toBe(true);
    expect((await post('/ui/queues/reports/resume', { cookie }, { csrf })).status).toBe(303);
    expect(await paused('reports')).toBe(false);
  });

  it('refuses a form whose percent-escapes are not UTF-8 with 400 (they were read as U+FFFD), changing nothing', async () => {
    const cookie = await sessionCookie(d.url, ADMIN_TOKEN);
    const csrf = await csrfOf(d.url, cookie);
    const res = await fetch(`${d.url}/ui/queues/reports/pause`, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...FORM, origin: d.url, cookie },
      body: `csrf=${encodeURIComponent(csrf)}&comment=%ff%fe`,
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('not validly percent-encoded UTF-8');
    expect(await paused('reports')).toBe(false);
  });

  it('refuses every action of a read-only session (403) and of no credentials (401), changing nothing', async () => {
    const cookie = await sessionCookie(d.url, READ_TOKEN);
    const csrf = await csrfOf(d.url, cookie);
    const [job] = (await d.client.admin.listJobs({ limit: 1 })).jobs;
    for (const path of ['/ui/queues/reports/pause', `/ui/jobs/${job!.id}/cancel`, `/ui/jobs/${job!.id}/retry`, '/ui/workers/w1/pause']) {
      expect((await post(path, { cookie }, { csrf })).status).toBe(403);
      expect((await post(path, {}, {})).status).toBe(401);
      expect((await post(path, { authorization: `Bearer ${READ_TOKEN}` })).status).toBe(403);
      expect((await post(path, { authorization: 'Bearer wrong-token-0123456789' })).status).toBe(401);
    }
    expect(await paused('reports')).toBe(false);
    expect((await d.client.getJob(job!.id))!.status).toBe('ready');
  });

  it('lets an admin bearer header act without a CSRF token (a header is never sent by a browser on its own)', async () => {
    const res = await post('/ui/queues/reports/pause', { authorization: `Bearer ${ADMIN_TOKEN}` });
    expect(res.status).toBe(303);
    expect(await paused('reports')).toBe(true);
    await d.client.admin.resumeQueue('reports');
  });

  it('answers what the client API refuses with its status: an unknown queue 404, a succeeded job\'s retry 409', async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const unknown = await post('/ui/queues/nowhere/pause', admin);
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('queue &quot;nowhere&quot; does not exist');
    const { id } = await d.client.enqueue('email.send', { to: 'a@example.com', subject: 'x' });
    const worker = new Worker(d.client, { queues: ['default'], listen: false }).handle('email.send', async () => 'sent');
    await worker.runOnce();
    await worker.stop();
    expect((await d.client.getJob(id))!.status).toBe('succeeded');
    const conflict = await post(`/ui/jobs/${id}/retry`, admin);
    expect(conflict.status).toBe(409);
    expect(await conflict.text()).toContain(`job ${id} is succeeded`);
    expect((await post('/ui/jobs/99999999/cancel', admin)).status).toBe(404);
  });

  it('answers a retry or discard of an outbox event the namespace does not hold 404, like an unknown job or queue', async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const { id } = await d.client.publish('order.paid', { order: 1 });
    for (const missing of ['99999', String(BigInt(id) + 1n), '9223372036854775807']) {
      for (const action of ['retry', 'discard']) {
        const res = await post(`/ui/outbox/${missing}/${action}`, admin);
        expect(res.status, `${action} ${missing}`).toBe(404);
        expect(await res.text()).toContain(`outbox event ${missing} not found in namespace &quot;default&quot;`);
      }
    }
    // The event below the missing ids is still there, and still acted on.
    expect((await post(`/ui/outbox/${id}/discard`, admin)).status).toBe(303);
    expect((await post(`/ui/outbox/${id}/discard`, admin)).status).toBe(404);
  });
});

describe('the page itself', () => {
  it('carries the strict Content-Security-Policy on pages, errors, sign-in and assets', async () => {
    const responses = await Promise.all([
      fetch(`${d.url}/ui`, { headers: { authorization: `Bearer ${READ_TOKEN}` } }),
      fetch(`${d.url}/ui/jobs/0`, { headers: { authorization: `Bearer ${READ_TOKEN}` } }),
      fetch(`${d.url}/ui/sign-in`),
      fetch(`${d.url}/ui/assets/dashboard.js`),
    ]);
    for (const res of responses) {
      expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
    expect(CONTENT_SECURITY_POLICY).toBe("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
    expect(responses[0]!.headers.get('cache-control')).toBe('no-store');
  });

  it('has no inline script, style or handler and refers to nothing outside this origin', async () => {
    const cookie = await sessionCookie(d.url, ADMIN_TOKEN);
    for (const path of ['/ui', '/ui/queues', '/ui/workers', '/ui/schedules', '/ui/sign-in']) {
      const page = await (await fetch(`${d.url}${path}`, { headers: { cookie } })).text();
      for (const tag of page.match(/<script[^>]*>/g) ?? []) expect(tag).toMatch(/^<script src="\/ui\/assets\/dashboard\.js\?v=[0-9a-f]{12}" defer>$/);
      expect(page).not.toMatch(/<script>|<style|\sstyle="|\son[a-z]+="/i);
      expect(page).not.toMatch(/(src|href|action)="(https?:)?\/\//);
    }
  });

  it('answers a bad filter 400 naming the field, a bad job id 400 and a missing job 404, as pages', async () => {
    const h = { headers: { authorization: `Bearer ${READ_TOKEN}` } };
    const bad = await fetch(`${d.url}/ui?status=bogus`, h);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('invalid filter: status');
    expect((await fetch(`${d.url}/ui?sort=id`, h)).status).toBe(400);
    // A filter typed with spaces around it (no type or queue has any) is read without them.
    expect((await fetch(`${d.url}/ui?type=%20report.build%20&queue=default%20`, h)).status).toBe(200);
    // The queue filter is typed, the known queues offered: one whose jobs all ended can be named too.
    const ended = await (await fetch(`${d.url}/ui?queue=all-ended`, h)).text();
    expect(ended).toContain('<input id="f-queue" name="queue" list="f-queues" value="all-ended"');
    expect((await fetch(`${d.url}/ui/jobs/abc`, h)).status).toBe(400);
    const missing = await fetch(`${d.url}/ui/jobs/424242`, h);
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain('job 424242 not found in namespace');
    // `/ui/` with its slash is the Namespace view (it was a 404 page), its query kept.
    const slash = await fetch(`${d.url}/ui/?status=failed`, { ...h, redirect: 'manual' });
    expect([slash.status, slash.headers.get('location')]).toEqual([301, '/ui?status=failed']);
    expect((await fetch(`${d.url}/ui/nope`, h)).status).toBe(404);
    expect(d.logged).toEqual([]);
  });
});

describe('configuration', () => {
  it('reads WORKHORSE_SESSION_SECRET once, and refuses a short one without echoing it', () => {
    expect(loadHttpEnvConfig({ WORKHORSE_SESSION_SECRET: SESSION_SECRET })).toMatchObject({ sessionSecret: SESSION_SECRET, sessionTtlMs: 28_800_000 });
    expect(loadHttpEnvConfig({})).toMatchObject({ sessionSecret: undefined });
    const err = (() => {
      try {
        loadHttpEnvConfig({ WORKHORSE_SESSION_SECRET: 'short-secret' });
      } catch (e) {
        return e as ConfigError;
      }
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect(err!.message).toContain('WORKHORSE_SESSION_SECRET: a session secret must be at least 32 characters');
    expect(err!.message).not.toContain('short-secret');
  });

  it('turns sign-in off without a session secret, and still serves bearer headers', async () => {
    const off = await startDashboard(db, { sessionSecret: undefined });
    try {
      expect(await (await fetch(`${off.url}/ui/sign-in`)).text()).toContain('Sign-in is off on this server: set <code>WORKHORSE_SESSION_SECRET</code>');
      const res = await fetch(`${off.url}/ui/sign-in`, { method: 'POST', headers: FORM, body: form({ token: ADMIN_TOKEN }), redirect: 'manual' });
      expect(res.status).toBe(403);
      expect(res.headers.get('set-cookie')).toBeNull();
      expect((await res.text()).match(/Sign-in is off on this server/g)).toHaveLength(1);
      expect((await fetch(`${off.url}/ui`, { headers: { authorization: `Bearer ${READ_TOKEN}` } })).status).toBe(200);
    } finally {
      await off.close();
    }
  });
});

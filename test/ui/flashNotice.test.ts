// A dashboard notice ("Job #7 cancelled.") is shown only on the redirect of
// an action this server carried out, over a real socket: the action's 303
// sets a flash cookie naming the address it redirects to, the page shows the
// notice for that address and clears the cookie. A crafted link carrying
// ?done=&subject= shows none, with or without a session, and so does a
// reload, another address, or a live refresh (which leaves the cookie be).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { ADMIN_TOKEN, csrfOf, sessionCookie, startDashboard, type Dashboard } from './support/dashboard.js';

let db: TestDatabase;
let d: Dashboard;
let jobId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  d = await startDashboard(db);
  jobId = (await d.client.enqueue('report.build', { account: 'acme', rows: 3 })).id;
});

afterAll(async () => {
  await d?.close();
  await db?.drop();
});

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const NOTICE = /<p class="notice" role="status">([^<]*)<\/p>/;

function post(path: string, headers: Record<string, string>, fields: Record<string, string> = {}): Promise<Response> {
  return fetch(`${d.url}${path}`, { method: 'POST', redirect: 'manual', headers: { ...FORM, origin: d.url, ...headers }, body: new URLSearchParams(fields) });
}

/** The notice a page shows, or null. */
async function noticeOn(path: string, headers: Record<string, string>): Promise<{ notice: string | null; setCookie: string | null }> {
  const res = await fetch(`${d.url}${path}`, { headers });
  expect(res.status, path).toBe(200);
  return { notice: NOTICE.exec(await res.text())?.[1] ?? null, setCookie: res.headers.get('set-cookie') };
}

/** The flash cookie an action's redirect set, as a Cookie header pair. */
function flashOf(res: Response): string {
  const set = res.headers.get('set-cookie') ?? '';
  expect(set).toMatch(/^__Host-workhorse-notice=[^;]+; Max-Age=60; Path=\/; HttpOnly; Secure; SameSite=Strict$/);
  return set.split(';')[0]!;
}

describe('dashboard notices', () => {
  it('shows no notice for a crafted link, signed in or with a bearer header', async () => {
    const session = await sessionCookie(d.url, ADMIN_TOKEN);
    for (const headers of [{ cookie: session }, { authorization: `Bearer ${ADMIN_TOKEN}` }] as Record<string, string>[]) {
      for (const path of [`/ui/jobs/${jobId}?done=job-cancelled&subject=999`, '/ui/queues?done=queue-paused&subject=ALL-QUEUES', '/ui?done=job-retried&subject=1']) {
        expect((await noticeOn(path, headers)).notice, path).toBeNull();
      }
    }
    expect((await d.client.getJob(jobId))!.status).toBe('ready');
  });

  it("shows an action's own notice once, on the page it redirected to, and clears the cookie", async () => {
    const session = await sessionCookie(d.url, ADMIN_TOKEN);
    const csrf = await csrfOf(d.url, session);
    const res = await post('/ui/queues/reports/pause', { cookie: session }, { csrf });
    expect(res.status).toBe(303);
    const location = res.headers.get('location')!;
    expect(location).toBe('/ui/queues?done=queue-paused&subject=reports');
    const flash = flashOf(res);
    const cookie = `${session}; ${flash}`;

    // Neither another address nor a live refresh of this one takes the cookie.
    expect(await noticeOn('/ui/queues?done=queue-paused&subject=ALL-QUEUES', { cookie })).toEqual({ notice: null, setCookie: null });
    expect(await noticeOn('/ui/queues?done=queue-resumed&subject=reports', { cookie })).toEqual({ notice: null, setCookie: null });
    const live = await fetch(`${d.url}${location}`, { headers: { cookie, 'x-workhorse-live': '1' } });
    expect(live.status).toBe(200);
    expect(live.headers.get('set-cookie')).toBeNull();

    const shown = await noticeOn(location, { cookie });
    expect(shown.notice).toBe('Queue reports paused: no worker claims from it until it is resumed.');
    expect(shown.setCookie).toMatch(/^__Host-workhorse-notice=; Max-Age=0; Path=\/; HttpOnly; Secure; SameSite=Strict$/);
    // The browser dropped the cookie: a reload shows no notice.
    expect((await noticeOn(location, { cookie: session })).notice).toBeNull();
    await d.client.admin.resumeQueue('reports');
  });

  it('shows the notice of a bearer header\'s action to a client that keeps the cookie', async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const res = await post(`/ui/jobs/${jobId}/cancel`, admin);
    expect(res.status).toBe(303);
    const location = res.headers.get('location')!;
    expect(location).toBe(`/ui/jobs/${jobId}?done=job-cancelled&subject=${jobId}`);
    expect((await noticeOn(location, admin)).notice).toBeNull();
    expect((await noticeOn(location, { ...admin, cookie: flashOf(res) })).notice).toBe(`Job #${jobId} cancelled.`);
  });

  it('matches the address as the URL parser normalises it (a worker id with a quote)', async () => {
    const id = "ops'w1";
    await db.pool.query('insert into workhorse.worker_registry (namespace, id, heartbeat_ms) values ($1, $2, 1000)', ['default', id]);
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const res = await post(`/ui/workers/${encodeURIComponent(id)}/pause`, admin);
    expect(res.status).toBe(303);
    const location = res.headers.get('location')!;
    expect(location).toBe("/ui/workers?done=worker-paused&subject=ops'w1");
    expect((await noticeOn(location, { ...admin, cookie: flashOf(res) })).notice).toBe('Worker ops&#39;w1 paused by the operator: it stops claiming at its next registry refresh.');
  });
});

// A dashboard button acts only on what it names. Names reach the views from
// the database, which any client may have written (the SQL protocol stores
// any queue name): a queue named `../jobs/<id>/cancel?` once made its Pause
// button post to /ui/jobs/<id>/cancel, cancelling that job, because the name
// went into the form's address unescaped and the action took the query
// string the `?` began. Names are now one percent-encoded path segment (such
// a name is then refused as a queue name, 400), and no dashboard action takes
// a query parameter, as no POST route of the API does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { ADMIN_TOKEN, startDashboard, type Dashboard } from './support/dashboard.js';

let db: TestDatabase;
let d: Dashboard;
let victim: string;
let evil: string;
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

beforeAll(async () => {
  db = await createTestDatabase();
  d = await startDashboard(db);
  victim = (await d.client.enqueue('report.build', { account: 'acme', rows: 3 })).id;
  evil = `../jobs/${victim}/cancel?`;
  await db.pool.query(`insert into workhorse.queues (namespace, name) values ('default', $1), ('default', '..')`, [evil]);
});
afterAll(async () => {
  await d?.close();
  await db?.drop();
});

const actionsOf = async (path: string) => [...(await (await fetch(`${d.url}${path}`, { headers: auth })).text()).matchAll(/<form class="inline" method="post" action="([^"]+)"/g)].map((m) => m[1]!);
const post = (path: string) => fetch(new URL(path, d.url), { method: 'POST', redirect: 'manual', headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, body: '' });

describe("a dashboard action's address", () => {
  it('carries a name as one encoded segment: the Pause button of `../jobs/<id>/cancel?` acts on that queue and cancels nothing', async () => {
    const actions = await actionsOf('/ui/queues');
    const pause = actions.find((a) => a.includes('cancel'));
    expect(pause).toBe(`/ui/queues/..%2Fjobs%2F${victim}%2Fcancel%3F/pause`);
    expect(actions).toContain('/ui/queues/%2E%2E/pause');
    // As a browser resolves the form's address against the page's.
    // As a browser resolves the form's address against the page's: the action is that queue's, which
    // this client refuses to name (it is not a valid queue name), and the job is untouched.
    const target = new URL(pause!, `${d.url}/ui/queues`);
    expect(target.pathname).toBe(`/ui/queues/..%2Fjobs%2F${victim}%2Fcancel%3F/pause`);
    const res = await post(target.pathname + target.search);
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/queue name/);
    expect((await d.client.getJob(victim))?.status).toBe('ready');
  });

  it('takes no query parameter: 400, and nothing is done', async () => {
    await db.pool.query(`insert into workhorse.queues (namespace, name, paused) values ('default', 'q1', true)`);
    const res = await post('/ui/queues/q1/resume?x=1');
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/a dashboard action takes no query parameter/);
    expect((await db.pool.query<{ paused: boolean }>("select paused from workhorse.queues where name = 'q1'")).rows[0]!.paused).toBe(true);
    expect((await post(`/ui/jobs/${victim}/cancel?/pause`)).status).toBe(400);
    expect((await d.client.getJob(victim))?.status).toBe('ready');
  });
});

describe('which queues have a Pause button', () => {
  it('sys, shown with only finished jobs, has one (it had none until a policy row existed); another queue of finished jobs has none, as POST /queues/:name/pause refuses it', async () => {
    for (const queue of ['sys', 'finished-only']) {
      const { id } = await d.client.enqueue('report.build', { account: 'acme', rows: 1 }, { queue });
      await d.client.cancel(id);
    }
    expect((await d.client.admin.listQueues()).map((q) => q.name)).not.toContain('sys');
    const actions = await actionsOf('/ui/queues');
    expect(actions).toContain('/ui/queues/sys/pause');
    expect(actions).not.toContain('/ui/queues/finished-only/pause');
    expect((await post('/ui/queues/sys/pause')).status).toBe(303);
    expect((await d.client.admin.listQueues()).find((q) => q.name === 'sys')?.paused).toBe(true);
    await d.client.admin.resumeQueue('sys');
  });
});

// The outbox and alerts over HTTP: list events by state, retry and discard
// them, list alerts; bad input is a typed 400, never a 500.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { buildHttp, withToken, type ErrorJson, type HttpHarness } from './helpers.js';

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

it('lists, retries and discards outbox events', async () => {
  const a = await h.client.publish('http.test', { n: 1 });
  const b = await h.client.publish('http.test', { n: 2 });
  await db.pool.query("update workhorse.outbox_events set state = 'dead', attempts = 10 where id = any($1::bigint[])", [[a.id, b.id]]);
  const list = await withToken(h.app, 'GET', '/outbox?state=dead&topic=http.test&limit=10');
  expect(list.status).toBe(200);
  const body = (await list.json()) as { events: { id: string; state: string; payload: unknown }[] };
  expect(body.events.map((e) => [e.id, e.state])).toEqual([
    [b.id, 'dead'],
    [a.id, 'dead'],
  ]);
  const retried = await withToken(h.app, 'POST', '/outbox/retry', { ids: [a.id] });
  expect(await retried.json()).toEqual({ retried: [a.id] });
  const discarded = await withToken(h.app, 'POST', '/outbox/discard', { ids: [b.id, '999999'] });
  expect(await discarded.json()).toEqual({ discarded: [b.id] });
  const pending = (await (await withToken(h.app, 'GET', '/outbox?state=pending')).json()) as { events: { id: string; attempts: number }[] };
  expect(pending.events).toMatchObject([{ id: a.id, attempts: 0 }]);
});

it('lists alerts, filtered by state', async () => {
  await db.pool.query(
    "insert into workhorse.alerts (namespace, rule, key, state, resolved_at) values ('default', 'backlog', 'q1', 'open', null), ('default', 'held_xmin', 'slot:s', 'resolved', now())",
  );
  const all = (await (await withToken(h.app, 'GET', '/alerts')).json()) as { alerts: { rule: string; state: string }[] };
  expect(all.alerts.map((x) => [x.rule, x.state])).toEqual([
    ['held_xmin', 'resolved'],
    ['backlog', 'open'],
  ]);
  const open = (await (await withToken(h.app, 'GET', '/alerts?state=open')).json()) as { alerts: { rule: string; key: string; openedAt: string }[] };
  expect(open.alerts).toMatchObject([{ rule: 'backlog', key: 'q1' }]);
});

it.each([
  ['GET', '/outbox?state=lost', undefined],
  ['GET', '/outbox?limit=0', undefined],
  ['GET', '/outbox?cursor=-1', undefined],
  ['GET', '/outbox?topic=has%20space', undefined],
  ['GET', '/outbox?other=1', undefined],
  ['POST', '/outbox/retry', { ids: [] }],
  ['POST', '/outbox/retry', { ids: ['x'] }],
  ['POST', '/outbox/discard', { ids: ['99999999999999999999'] }],
  ['POST', '/outbox/discard', 'not json'],
  ['GET', '/alerts?state=closed', undefined],
  ['GET', '/alerts?limit=99999', undefined],
])('%s %s with bad input is a 400 validation error', async (method, path, body) => {
  const res = await withToken(h.app, method, path, body);
  const text = await res.text();
  expect(res.status, text).toBe(400);
  expect((JSON.parse(text) as ErrorJson).error.code).toBe('validation_failed');
});

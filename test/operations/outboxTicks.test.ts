// Outbox delivery on ticks: a tick that fires the sys slots with sinks
// delivers the due events before it returns (not only when the sys.outbox
// cadence comes round), and two ticks racing for the sys.outbox slot fire
// the cadence once, run one sys.outbox job, and deliver every event exactly
// once (the sink never fails, so nothing is sent again).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defineApp } from '../../src/app/defineApp.js';
import { Client } from '../../src/client/client.js';
import { webhookSink } from '../../src/outbox/webhookSink.js';
import { runTick } from '../../src/tick/runTick.js';
import { backdateSlot } from '../tick/support.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhookReceiver.js';

const SECRET = 'tick-secret-0123456789';
let db: TestDatabase;
let client: Client;
let r: WebhookReceiver;

beforeAll(async () => {
  db = await createTestDatabase();
  client = new Client({ connectionString: db.url });
  r = await startWebhookReceiver(SECRET);
});
afterAll(async () => {
  await r.close();
  await client.close();
  await db.drop();
});

it('a tick delivers before it returns; two ticks racing for the outbox slot fire it once; each event is delivered exactly once', async () => {
  const app = defineApp({ jobs: [], configure: () => undefined, outbox: { sinks: [webhookSink({ url: r.url, secret: SECRET })], batchSize: 7 } });
  const ids: string[] = [];
  const publish = async (n: number) => {
    for (let i = 0; i < n; i++) ids.push((await client.publish('tick.race', { i }, { key: i % 2 ? 'odd' : 'even' })).id);
  };
  await publish(40);
  const tick = () => runTick({ app, connectionString: db.url, deadline: new Date(Date.now() + 20_000), scheduleNamespaces: ['sys'] });
  // The first tick stores the slots (first cadence one interval away), fires
  // none, and still delivers what was pending before it returns.
  const first = await tick();
  expect(first.slotsFired).toBe(0);
  expect(r.requests).toHaveLength(40);
  await publish(40);
  await backdateSlot(db.pool, 'sys.outbox', 1);
  const [a, b] = await Promise.all([tick(), tick()]);
  // The cadence fired once, by one tick or the other.
  expect(a.slotsFired + b.slotsFired).toBe(1);
  const jobs = await db.pool.query<{ status: string }>("select status from workhorse.jobs where type = 'sys.outbox'");
  expect(jobs.rows).toEqual([{ status: 'succeeded' }]);
  expect(r.requests).toHaveLength(80);
  expect(r.accepted().map((q) => q.json.id).sort()).toEqual([...ids].sort());
  const left = await db.pool.query<{ n: number }>("select count(*)::int n from workhorse.outbox_events where state <> 'delivered'");
  expect(left.rows[0]!.n).toBe(0);
  // Per key, in publication order.
  for (const key of ['odd', 'even']) {
    const got = r.requests.filter((q) => q.json.key === key).map((q) => BigInt(q.json.id));
    expect(got).toEqual([...got].sort((x, y) => (x < y ? -1 : 1)));
  }
});

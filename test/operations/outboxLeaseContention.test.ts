// A delivery pass that meets another deliverer's lease statement mid-way
// does not stop with events left due. A lease statement locks the rows it
// looks at for an instant; with those rows skipped, every later event of
// their keys was held back (its earlier event was not in the batch), the
// lease came back empty and the pass ended as if the outbox were empty: two
// ticks racing delivered one batch of 40 events and left the rest to the
// next cadence. Here the instant is stretched: another session holds the
// lock on each key's first event for 300 ms while a pass starts.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Client } from '../../src/client/client.js';
import { deliverOutbox } from '../../src/outbox/deliver.js';
import { parseOutboxOptions } from '../../src/outbox/outboxOptions.js';
import type { Sink } from '../../src/outbox/sink.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = new Client({ connectionString: db.url });
});
afterAll(async () => {
  await client.close();
  await db.drop();
});

it('a pass that finds the due events locked for an instant waits for them instead of ending empty', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) ids.push((await client.publish('lock.race', { i }, { key: i % 2 ? 'odd' : 'even' })).id);
  const sent: string[] = [];
  const sink: Sink = { name: 'memory', deliver: async (e) => void sent.push(e.id) };
  const o = parseOutboxOptions({ sinks: [sink], batchSize: 5 });

  const holder = await db.pool.connect();
  try {
    await holder.query('begin');
    await holder.query('select id from workhorse.outbox_events where id = any($1::bigint[]) for update', [ids.slice(0, 2)]);
    const pass = deliverOutbox(client, o);
    await new Promise((r) => setTimeout(r, 300));
    await holder.query('rollback');
    const r = await pass;
    expect(r.delivered).toBe(12);
    expect(sent).toEqual(ids);
  } finally {
    holder.release();
  }
  const left = await db.pool.query<{ n: number }>("select count(*)::int n from workhorse.outbox_events where state <> 'delivered'");
  expect(left.rows[0]!.n).toBe(0);
});

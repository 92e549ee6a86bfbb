// A delivery pass that meets another deliverer's lease mid-way does not
// stop with events left due, and a row another session locks holds back
// its own key only. Leases skipped rows locked by a lease statement in
// flight: with a key's first event skipped for that instant every later
// event of the key was left out, the lease came back empty and the pass
// ended as if the outbox were empty (two ticks racing delivered one batch
// of 40 events and left the rest to the next cadence). Waiting for every
// locked row instead let any transaction holding an outbox row stall every
// key. Deliverers of a namespace now lease one at a time (an advisory
// lock), so a skipped row is only ever another session's.
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

it("a pass that meets another deliverer's lease waits for it instead of ending empty", async () => {
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) ids.push((await client.publish('lock.race', { i }, { key: i % 2 ? 'odd' : 'even' })).id);
  const sent: string[] = [];
  const sink: Sink = { name: 'memory', deliver: async (e) => void sent.push(e.id) };
  const o = parseOutboxOptions({ sinks: [sink], batchSize: 5 });

  // Another deliverer mid-lease, stretched to 300 ms: it holds the namespace's lease lock.
  const holder = await db.pool.connect();
  try {
    await holder.query('begin');
    await holder.query("select pg_advisory_xact_lock(workhorse.outbox_lease_lock_v1(), hashtext('default'))");
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

it("a row another session locks holds back its own key only; the key goes out, in order, once it is free", async () => {
  await db.pool.query('delete from workhorse.outbox_events');
  const a = [];
  const b = [];
  for (let i = 0; i < 3; i++) {
    a.push((await client.publish('lock.row', { i }, { key: 'a' })).id);
    b.push((await client.publish('lock.row', { i }, { key: 'b' })).id);
  }
  const sent: string[] = [];
  const sink: Sink = { name: 'memory', deliver: async (e) => void sent.push(e.id) };
  const o = parseOutboxOptions({ sinks: [sink] });
  const holder = await db.pool.connect();
  try {
    await holder.query('begin');
    await holder.query('select id from workhorse.outbox_events where id = $1 for update', [a[0]]);
    // Bounded: a lease waiting for the lock would fail here instead of hanging.
    const first = await Promise.race([deliverOutbox(client, o), new Promise((_, reject) => setTimeout(() => reject(new Error('the pass waited for the locked row')), 5_000))]);
    expect(first).toMatchObject({ delivered: 3 });
    expect(sent).toEqual(b);
    await holder.query('rollback');
  } finally {
    holder.release();
  }
  expect(await deliverOutbox(client, o)).toMatchObject({ delivered: 3 });
  expect(sent).toEqual([...b, ...a]);
});

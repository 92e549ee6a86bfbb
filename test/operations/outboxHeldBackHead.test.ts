// Events held back by their key (an earlier event of the key is delayed,
// in backoff, or being published in an open transaction) do not fill a
// lease. A lease cut the oldest batchSize due events first and dropped the
// held-back ones after, so with a batch's worth of them at the head it came
// back empty, the pass ended, and no key's events went out.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Client } from '../../src/client/client.js';
import { deliverOutbox } from '../../src/outbox/deliver.js';
import { parseOutboxOptions } from '../../src/outbox/outboxOptions.js';
import type { Sink } from '../../src/outbox/sink.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let db: TestDatabase;
let client: Client;
const sent: string[] = [];
const sink: Sink = { name: 'memory', deliver: async (e) => void sent.push(e.id) };
const o = parseOutboxOptions({ sinks: [sink], batchSize: 10 });

beforeAll(async () => {
  db = await createTestDatabase();
  client = new Client({ connectionString: db.url });
});
afterAll(async () => {
  await client.close();
  await db.drop();
});

it('delivers other keys past a batch of events held back behind a delayed one', async () => {
  await client.publish('held.back', { n: 0 }, { key: 'a', delayMs: 60_000 });
  for (let n = 1; n <= 25; n++) await client.publish('held.back', { n }, { key: 'a' });
  const b = await client.publish('held.back', { n: 'b' }, { key: 'b' });
  const loose = await client.publish('held.back', { n: 'loose' });
  expect(await deliverOutbox(client, o)).toMatchObject({ delivered: 2 });
  expect(sent).toEqual([b.id, loose.id]);
});

it('delivers other keys past a batch of events of a key whose publish is still open', async () => {
  sent.length = 0;
  await db.pool.query('delete from workhorse.outbox_events');
  const tx = await db.pool.connect();
  try {
    await tx.query('begin');
    await client.publish('held.open', { n: 0 }, { key: 'a', tx });
    for (let n = 1; n <= 25; n++) await client.publish('held.open', { n }, { key: 'a' });
    const b = await client.publish('held.open', { n: 'b' }, { key: 'b' });
    expect(await deliverOutbox(client, o)).toMatchObject({ delivered: 1 });
    expect(sent).toEqual([b.id]);
    await tx.query('commit');
  } finally {
    tx.release();
  }
  expect(await deliverOutbox(client, o)).toMatchObject({ delivered: 26 });
});

// A slow delivery holds its own key, not every other. A delivery pass
// settles its batch when its last key is done, and the worker's pump ran
// one pass at a time, so one event whose sink took its time (up to the
// webhook's 10 s timeout, or the lease) held every event committed after
// it, on any key. A pass that has run for a second now gets another beside
// it, which leases what the slow one does not hold; the slow key's later
// events still wait for it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Client } from '../../src/client/client.js';
import { parseOutboxOptions } from '../../src/outbox/outboxOptions.js';
import { OutboxPump } from '../../src/outbox/outboxPump.js';
import type { Sink } from '../../src/outbox/sink.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { sleep, waitFor } from '../helpers/wait.js';

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

it('delivers events of other keys while one key waits on a slow sink, and that key in order after it', async () => {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const sent: { id: string; key: string | null }[] = [];
  const sink: Sink = {
    name: 'memory',
    deliver: async (e) => {
      if (e.key === 'slow' && (e.payload as { n: number }).n === 1) await held;
      sent.push({ id: e.id, key: e.key });
    },
  };
  const errors: unknown[] = [];
  const pump = new OutboxPump(client, parseOutboxOptions({ sinks: [sink], leaseMs: 30_000 }), 'test:pump', (e) => errors.push(e));
  pump.start();
  try {
    const slow1 = await client.publish('slow.sink', { n: 1 }, { key: 'slow' });
    await sleep(300); // the pump's pass is waiting on the slow delivery
    const slow2 = await client.publish('slow.sink', { n: 2 }, { key: 'slow' });
    const other = await client.publish('slow.sink', { n: 3 }, { key: 'other' });
    const loose = await client.publish('slow.sink', { n: 4 });
    await waitFor(() => sent.map((s) => s.id).sort(), (ids) => ids.length === 2, { what: 'the other keys delivered', timeoutMs: 8_000 });
    expect(sent.map((s) => s.id).sort()).toEqual([other.id, loose.id].sort());
    release();
    await waitFor(() => sent.length, (n) => n === 4, { what: 'the slow key delivered', timeoutMs: 10_000 });
    expect(sent.filter((s) => s.key === 'slow').map((s) => s.id)).toEqual([slow1.id, slow2.id]);
    expect(errors).toEqual([]);
  } finally {
    release();
    await pump.stop();
  }
});

it("records a batch's finished keys while a slow key of the same batch still runs, so their later events need not wait for it", async () => {
  await db.pool.query('delete from workhorse.outbox_events');
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const sent: string[] = [];
  const sink: Sink = {
    name: 'memory',
    deliver: async (e) => {
      if (e.key === 'slow') await held;
      sent.push(e.id);
    },
  };
  const pump = new OutboxPump(client, parseOutboxOptions({ sinks: [sink], leaseMs: 30_000 }), 'test:pump', () => undefined);
  // Both in one transaction, so one batch leases them together.
  const tx = await db.pool.connect();
  let f1: { id: string };
  try {
    await tx.query('begin');
    await client.publish('slow.batch', { n: 's' }, { key: 'slow', tx });
    f1 = await client.publish('slow.batch', { n: 1 }, { key: 'fast', tx });
    await tx.query('commit');
  } finally {
    tx.release();
  }
  pump.start();
  try {
    await waitFor(() => sent.length, (n) => n === 1, { what: 'the fast key delivered', timeoutMs: 5_000 });
    await sleep(500);
    const f2 = await client.publish('slow.batch', { n: 2 }, { key: 'fast' });
    await waitFor(() => sent, (s) => s.includes(f2.id), { what: "the fast key's later event delivered while the slow one runs", timeoutMs: 5_000 });
    expect(sent).toEqual([f1!.id, f2.id]);
  } finally {
    release();
    await pump.stop();
  }
});

it("delivers the keys bound for one sink while more keys than the concurrency wait on another sink that hangs", async () => {
  await db.pool.query('delete from workhorse.outbox_events');
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const hung: string[] = [];
  const sent: string[] = [];
  const hanging: Sink = {
    name: 'hanging',
    topics: ['bad.hang'],
    deliver: async (e) => {
      hung.push(e.id);
      await held;
    },
  };
  const fine: Sink = { name: 'fine', topics: ['good.*'], deliver: async (e) => void sent.push(e.id) };
  const pump = new OutboxPump(client, parseOutboxOptions({ sinks: [hanging, fine], leaseMs: 30_000, concurrency: 2 }), 'test:pump', () => undefined);
  // One batch: 6 keys for the hanging sink first (3 times the concurrency), then 3 for the other.
  const tx = await db.pool.connect();
  const good: string[] = [];
  try {
    await tx.query('begin');
    for (let i = 0; i < 6; i++) await client.publish('bad.hang', { i }, { key: `bad${i}`, tx });
    for (let i = 0; i < 3; i++) good.push((await client.publish('good.x', { i }, { key: `good${i}`, tx })).id);
    await tx.query('commit');
  } finally {
    tx.release();
  }
  pump.start();
  try {
    // Each key's turn on its own route: the hanging sink holds 2 keys at once, the other sink's keys go out.
    await waitFor(() => [...sent].sort(), (s) => s.length === 3, { what: "the other sink's keys delivered", timeoutMs: 5_000 });
    expect([...sent].sort()).toEqual([...good].sort());
    expect(hung).toHaveLength(2);
  } finally {
    release();
    await pump.stop();
  }
});

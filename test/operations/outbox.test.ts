// The transactional outbox against real PostgreSQL and a real webhook
// receiver on loopback: only committed events are delivered, signed; a
// failing sink is retried with backoff; per-key order holds through
// failures; dead-lettering, retry and discard; a deliverer whose lease was
// taken over writes nothing.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/client.js';
import { deliverOutbox } from '../../src/outbox/deliver.js';
import { parseOutboxOptions } from '../../src/outbox/outboxOptions.js';
import { webhookSink } from '../../src/outbox/webhookSink.js';
import { ConfigError, ValidationError } from '../../src/errors.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhookReceiver.js';

const SECRET = 'outbox-test-secret';
let db: TestDatabase;
let client: Client;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  client = new Client({ connectionString: db.url });
});
afterEach(async () => {
  while (closers.length) await closers.pop()!();
  await db.pool.query('delete from workhorse.outbox_events');
});
afterAll(async () => {
  await client.close();
  await db.drop();
});

async function receiver(respond?: Parameters<typeof startWebhookReceiver>[1]): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver(SECRET, respond);
  closers.push(() => r.close());
  return r;
}

/** A worker that fires the `sys` slots and so delivers the outbox right after each commit. */
function deliveringWorker(url: string, extra: { maxAttempts?: number } = {}): Worker {
  const worker = new Worker(client, {
    queue: 'default',
    pollMs: 100,
    scheduleNamespaces: ['sys'],
    outbox: { sinks: [webhookSink({ url, secret: SECRET })], backoff: { baseMs: 50, maxMs: 200 }, ...extra },
  });
  const run = worker.run();
  closers.push(() => worker.stop().then(() => run));
  return worker;
}

/** Outbox options delivering to the webhook at `url`, for a delivery pass called directly. */
const sinkOptions = (url: string) => parseOutboxOptions({ sinks: [webhookSink({ url, secret: SECRET })], backoff: { baseMs: 0, maxMs: 0 } });

const states = async () =>
  (await db.pool.query<{ state: string; n: number }>('select state, count(*)::int n from workhorse.outbox_events group by state')).rows.reduce<Record<string, number>>(
    (acc, r) => ({ ...acc, [r.state]: r.n }),
    {},
  );

describe('client.publish', () => {
  it('delivers exactly the events of committed transactions: 100 published in 50 committed and 50 rolled back, 50 arrive, each signed', async () => {
    const r = await receiver();
    deliveringWorker(r.url);
    const committed = new Set<number>();
    for (let i = 0; i < 100; i++) {
      const c = await client.pool.connect();
      try {
        await c.query('begin');
        await client.publish('order.created', { i }, { tx: c });
        if (i % 2 === 0) {
          await c.query('commit');
          committed.add(i);
        } else {
          await c.query('rollback');
        }
      } finally {
        c.release();
      }
    }
    await waitFor(states, (s) => s.delivered === 50, { what: '50 delivered events', timeoutMs: 30_000 });
    expect(await states()).toEqual({ delivered: 50 });
    const got = r.accepted();
    expect(got).toHaveLength(50);
    expect(got.every((q) => q.signatureOk)).toBe(true);
    expect(new Set(got.map((q) => q.headers['x-workhorse-event-id'])).size).toBe(50);
    expect(got.every((q) => q.headers['x-workhorse-event-id'] === q.json.id && q.json.topic === 'order.created')).toBe(true);
    expect(new Set(got.map((q) => (q.json.payload as { i: number }).i))).toEqual(committed);
  });

  it('refuses a bad topic, key or payload before writing anything', async () => {
    await expect(client.publish('has space', {})).rejects.toBeInstanceOf(ValidationError);
    await expect(client.publish('ok.topic', {}, { key: '' })).rejects.toBeInstanceOf(ValidationError);
    await expect(client.publish('ok.topic', { big: 1n })).rejects.toBeInstanceOf(ValidationError);
    await expect(client.publish('ok.topic', {}, { delayMs: -1 })).rejects.toBeInstanceOf(ValidationError);
    expect(await states()).toEqual({});
  });

  it('measures a key in UTF-8 bytes before any SQL runs, so a key over 500 bytes leaves the caller\'s transaction usable', async () => {
    const key = 'é'.repeat(300); // 300 characters, 600 bytes
    const c = await db.pool.connect();
    try {
      await c.query('begin');
      const err = await client.publish('ok.topic', {}, { tx: c, key }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).issues[0]!.path).toEqual(['key']);
      // Refused before the database saw it: the transaction is still open and takes statements.
      expect((await c.query<{ one: number }>('select 1 as one')).rows[0]!.one).toBe(1);
    } finally {
      await c.query('rollback');
      c.release();
    }
    // 250 two-byte characters are exactly 500 bytes: accepted.
    expect((await client.publish('ok.topic', {}, { key: 'é'.repeat(250) })).id).toMatch(/^\d+$/);
  });
});

describe('configuration', () => {
  it('refuses bad sinks and outbox options with a ConfigError naming the field', () => {
    expect(() => webhookSink({ url: 'ftp://x', secret: 'sink-secret-0123456789' })).toThrow(ConfigError);
    // Not a URL at all: the ConfigError names the field, not a TypeError from the URL parser.
    expect(() => webhookSink({ url: 'not a url', secret: 'sink-secret-0123456789' })).toThrow(ConfigError);
    expect(() => webhookSink({ url: 'not a url', secret: 'sink-secret-0123456789' })).toThrow(/url/);
    expect(() => webhookSink({ url: 'https://x.example', secret: '' })).toThrow(/secret/);
    // As short as WORKHORSE_SIGNING_SECRET may not be: the same scheme, the same floor.
    expect(() => webhookSink({ url: 'https://x.example', secret: 'a' })).toThrow(ConfigError);
    expect(() => webhookSink({ url: 'https://x.example', secret: '0123456789abcde' })).toThrow(/secret: a secret must be at least 16 characters/);
    expect(() => new Worker(client, { scheduleNamespaces: ['sys'], outbox: { sinks: [] } })).toThrow(/outbox\.sinks/);
    expect(() => new Worker(client, { scheduleNamespaces: ['sys'], outbox: { sinks: [{} as never] } })).toThrow(ConfigError);
    const sink = webhookSink({ url: 'https://x.example', secret: 'sink-secret-0123456789' });
    expect(() => new Worker(client, { scheduleNamespaces: ['sys'], outbox: { sinks: [sink], maxAttempts: 0 } })).toThrow(/maxAttempts/);
    // Only the sys slots deliver: without them the option would do nothing.
    expect(() => new Worker(client, { outbox: { sinks: [sink] } })).toThrow(/scheduleNamespaces/);
    expect(() => new Worker(client, { scheduleNamespaces: ['default'], alerts: {} })).toThrow(/scheduleNamespaces/);
  });
});

describe('delivery', () => {
  it('retries a sink that fails 3 times, then delivers the same event id once it succeeds', async () => {
    const r = await receiver((_req, nth) => (nth < 3 ? 500 : 200));
    deliveringWorker(r.url);
    const { id } = await client.publish('invoice.paid', { n: 1 });
    await waitFor(states, (s) => s.delivered === 1, { what: 'the event delivered', timeoutMs: 30_000 });
    expect(r.requests.map((q) => q.status)).toEqual([500, 500, 500, 200]);
    expect(r.requests.map((q) => q.json.attempt)).toEqual([1, 2, 3, 4]);
    expect(new Set(r.requests.map((q) => q.headers['x-workhorse-event-id']))).toEqual(new Set([id]));
    const [row] = (await db.pool.query('select attempts, last_error from workhorse.outbox_events where id = $1', [id])).rows;
    expect(row.attempts).toBe(4);
    expect(row.last_error.message).toMatch(/webhook answered 500/);
  });

  it('keeps the order of each key through failures: a key stops at its failed event until that one is delivered', async () => {
    // Fails about a third of the requests, deterministically.
    let seed = 7;
    const r = await receiver(() => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % 3 === 0 ? 503 : 200));
    const ids: Record<string, string[]> = { a: [], b: [], c: [] };
    for (let i = 0; i < 60; i++) {
      const key = 'abc'[i % 3]!;
      ids[key]!.push((await client.publish('account.changed', { key, i }, { key })).id);
    }
    deliveringWorker(r.url);
    await waitFor(states, (s) => s.delivered === 60, { what: '60 delivered events', timeoutMs: 45_000 });
    expect(r.requests.some((q) => q.status === 503)).toBe(true);
    for (const key of ['a', 'b', 'c']) {
      const sent = r.requests.filter((q) => q.json.key === key);
      const order = sent.map((q) => BigInt(q.json.id));
      // Never a later event of the key before an earlier one has been accepted.
      for (let i = 1; i < order.length; i++) expect(order[i]! >= order[i - 1]!).toBe(true);
      expect(sent.filter((q) => q.status === 200).map((q) => q.json.id)).toEqual(ids[key]);
    }
  });

  it('keeps the order of a key when an earlier event commits after a later one: the later one waits for it', async () => {
    const r = await receiver();
    const tx = await db.pool.connect();
    try {
      await tx.query('begin');
      // Published first (id 1), committed last.
      const first = await client.publish('order.placed', { n: 1 }, { key: 'k', tx });
      const second = await client.publish('order.placed', { n: 2 }, { key: 'k' });
      const other = await client.publish('order.placed', { n: 3 }, { key: 'other' });
      expect(BigInt(first.id) < BigInt(second.id)).toBe(true);
      // A deliverer runs while the first is still in flight: the key waits, another key goes out.
      expect(await deliverOutbox(client, sinkOptions(r.url), { owner: 'd1' })).toMatchObject({ delivered: 1 });
      expect(r.requests.map((q) => q.json.id)).toEqual([other.id]);
      await tx.query('commit');
    } finally {
      tx.release();
    }
    expect(await deliverOutbox(client, sinkOptions(r.url), { owner: 'd1' })).toMatchObject({ delivered: 2 });
    expect(r.requests.filter((q) => q.json.key === 'k').map((q) => q.json.payload)).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('two open transactions publishing on one key do not wait for each other; the key goes out once both have ended', async () => {
    const r = await receiver();
    const a = await db.pool.connect();
    const b = await db.pool.connect();
    try {
      await a.query('begin');
      await b.query('begin');
      // Bounded: a publish that waited for the other transaction would fail here instead of hanging.
      await a.query("set local lock_timeout = '2s'");
      await b.query("set local lock_timeout = '2s'");
      const first = await client.publish('order.placed', { n: 1 }, { key: 'shared', tx: a });
      const second = await client.publish('order.placed', { n: 2 }, { key: 'shared', tx: b });
      await b.query('commit');
      expect(await deliverOutbox(client, sinkOptions(r.url), { owner: 'd1' })).toMatchObject({ delivered: 0 });
      await a.query('commit');
      expect(await deliverOutbox(client, sinkOptions(r.url), { owner: 'd1' })).toMatchObject({ delivered: 2 });
      expect(r.requests.map((q) => q.json.id)).toEqual([first.id, second.id]);
    } finally {
      a.release();
      b.release();
    }
  });

  it('dead-letters an event after maxAttempts failures; an operator lists, retries and discards', async () => {
    let broken = true;
    const r = await receiver(() => (broken ? 500 : 200));
    const o = parseOutboxOptions({ sinks: [webhookSink({ url: r.url, secret: SECRET })], maxAttempts: 2, backoff: { baseMs: 0, maxMs: 0 } });
    const a = await client.publish('mail.bounced', { n: 'a' });
    const b = await client.publish('mail.bounced', { n: 'b' });
    await waitFor(
      async () => (await deliverOutbox(client, o), states()),
      (s) => s.dead === 2,
      { what: 'two dead events' },
    );
    const dead = await client.outbox.list({ state: 'dead' });
    expect(dead.map((e) => e.id)).toEqual([b.id, a.id]);
    // Paged as operations.md shows: a null cursor is the first page, the last id the next one's.
    let cursor: string | null = null;
    const paged: string[] = [];
    for (;;) {
      const page = await client.outbox.list({ state: 'dead', limit: 1, cursor });
      paged.push(...page.map((e) => e.id));
      if (page.length < 1) break;
      cursor = page[page.length - 1]!.id;
    }
    expect(paged).toEqual([b.id, a.id]);
    expect(dead.every((e) => e.attempts === 2 && (e.lastError as { message: string }).message.includes('500'))).toBe(true);
    // A dead event is not retried by delivery.
    const before = r.requests.length;
    await deliverOutbox(client, o);
    expect(r.requests.length).toBe(before);

    expect(await client.outbox.discard([b.id])).toEqual([b.id]);
    broken = false;
    expect(await client.outbox.retry([a.id, b.id])).toEqual([a.id]);
    const res = await deliverOutbox(client, o);
    expect(res.delivered).toBe(1);
    expect(await states()).toEqual({ delivered: 1 });
    expect(r.accepted().map((q) => q.json.id)).toEqual([a.id]);
    // Delivered events are neither retried nor discarded.
    expect(await client.outbox.retry([a.id])).toEqual([]);
    expect(await client.outbox.discard([a.id])).toEqual([]);
    await expect(client.outbox.retry(['not-an-id'])).rejects.toBeInstanceOf(ValidationError);
  });

  it('holds a delayed event back until it is due', async () => {
    const r = await receiver();
    const o = parseOutboxOptions({ sinks: [webhookSink({ url: r.url, secret: SECRET })] });
    await client.publish('later', {}, { delayMs: 1500 });
    expect((await deliverOutbox(client, o)).delivered).toBe(0);
    await waitFor(async () => (await deliverOutbox(client, o)).delivered, (n) => n === 1, { what: 'the delayed event', timeoutMs: 10_000 });
    expect(r.accepted()).toHaveLength(1);
  });

  it('sends each topic only to the sinks that take it', async () => {
    const all = await receiver();
    const orders = await receiver();
    const o = parseOutboxOptions({
      sinks: [webhookSink({ url: all.url, secret: SECRET }), webhookSink({ url: orders.url, secret: SECRET, topics: ['order.*'] })],
    });
    await client.publish('order.created', {});
    await client.publish('user.created', {});
    expect((await deliverOutbox(client, o)).delivered).toBe(2);
    // Events without a key go out in parallel: no order between them.
    expect(all.accepted().map((q) => q.json.topic).sort()).toEqual(['order.created', 'user.created']);
    expect(orders.accepted().map((q) => q.json.topic)).toEqual(['order.created']);
  });

  it('a deliverer whose lease ran out and was taken over writes nothing', async () => {
    const { id } = await client.publish('t.fence', {});
    const first = await client.protocol.leaseOutbox(client.pool, client.namespace, 'owner-a', 10, 1000);
    expect(first.map((e) => e.id)).toEqual([id]);
    // Held: nobody else gets it.
    expect(await client.protocol.leaseOutbox(client.pool, client.namespace, 'owner-b', 10, 1000)).toEqual([]);
    await waitFor(
      () => client.protocol.leaseOutbox(client.pool, client.namespace, 'owner-b', 10, 60_000),
      (l) => l.length === 1,
      { what: 'owner-b to take the expired lease', intervalMs: 200 },
    );
    const policy = { maxAttempts: 5, baseMs: 0, maxMs: 0 };
    const stale = await client.protocol.settleOutbox(client.pool, client.namespace, 'owner-a', { delivered: [], failed: [{ id, error: { message: 'x' } }], released: [] }, policy);
    expect(stale).toEqual({ delivered: 0, retried: 0, dead: 0 });
    const [row] = (await db.pool.query('select attempts, leased_by, state from workhorse.outbox_events where id = $1', [id])).rows;
    expect(row).toEqual({ attempts: 0, leased_by: 'owner-b', state: 'pending' });
    const ok = await client.protocol.settleOutbox(client.pool, client.namespace, 'owner-b', { delivered: [id], failed: [], released: [] }, policy);
    expect(ok.delivered).toBe(1);
  });
});

// The outbox through a brief database fault, against real PostgreSQL and a
// real webhook receiver on loopback: a fault costs seconds, not the lease
// (60 s by default). A lease call that committed while its answer was lost
// (the server's answers thrown away by a TCP proxy, then the connection
// reset) leaves nothing leased: the pass releases what its owner may hold,
// and a worker delivers every event within seconds, in per-key order. A
// settlement that fails on a fault (the database read-only for a moment,
// the deliverer's connections terminated) is written again once the
// database answers: the events are recorded delivered within seconds, and
// the events of their key after them are not held back.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TcpProxy } from '../../certify/tcpProxy.js';
import { Client } from '../../src/client/client.js';
import { deliverOutbox, OutboxFaultError } from '../../src/outbox/deliver.js';
import { parseOutboxOptions } from '../../src/outbox/outboxOptions.js';
import type { Sink } from '../../src/outbox/sink.js';
import { webhookSink } from '../../src/outbox/webhookSink.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhookReceiver.js';

const SECRET = 'outbox-fault-secret';
/** Well under the default lease of 60 s: what a brief fault may cost. */
const WITHIN_MS = 8_000;
let db: TestDatabase;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});
afterEach(async () => {
  while (closers.length) await closers.pop()!();
  await db.pool.query('delete from workhorse.outbox_events');
});
afterAll(async () => {
  await db.drop();
});

function withUrl(url: string, change: (u: URL) => void): string {
  const u = new URL(url);
  change(u);
  return u.toString();
}

async function receiver(): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver(SECRET);
  closers.push(() => r.close());
  return r;
}

function newClient(url: string): Client {
  const c = new Client({ connectionString: url });
  closers.push(() => c.close());
  return c;
}

function deliveringWorker(client: Client, sink: Sink): void {
  const worker = new Worker(client, {
    queue: 'default',
    pollMs: 100,
    scheduleNamespaces: ['sys'],
    outbox: { sinks: [sink], backoff: { baseMs: 50, maxMs: 200 } },
  });
  const run = worker.run();
  closers.push(() => worker.stop().then(() => run));
}

/** Publishes `perKey` events on each of `keys`, interleaved; returns their ids by key, in id order. */
async function publishKeyed(client: Client, keys: string[], perKey: number): Promise<Map<string, string[]>> {
  const ids = new Map<string, string[]>(keys.map((k) => [k, []]));
  for (let i = 0; i < perKey; i++) for (const k of keys) ids.get(k)!.push((await client.publish('order.changed', { k, i }, { key: k })).id);
  return ids;
}

const delivered = async () => (await db.pool.query<{ n: number }>("select count(*)::int n from workhorse.outbox_events where state = 'delivered'")).rows[0]!.n;

/** Each key's events arrived in id order (a repeat of one already seen is allowed: at least once). */
function expectPerKeyOrder(r: WebhookReceiver, ids: Map<string, string[]>): void {
  for (const [k, want] of ids) {
    const seen: string[] = [];
    for (const q of r.accepted()) if (q.json.key === k && !seen.includes(q.json.id)) seen.push(q.json.id);
    expect(seen).toEqual(want);
  }
}

describe('the outbox through a brief database fault', () => {
  it('a lease whose answer was lost is released by its pass: the events go out within seconds, in key order, not after the lease', async () => {
    const r = await receiver();
    const direct = newClient(db.url);
    const ids = await publishKeyed(direct, ['a', 'b'], 3);

    const target = new URL(db.url);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    const port = await proxy.start();
    closers.push(() => proxy.close());
    const proxied = newClient(withUrl(db.url, (u) => (u.port = String(port))));
    await proxied.pool.query('select 1'); // a connection open before the answers stop

    const o = parseOutboxOptions({ sinks: [webhookSink({ url: r.url, secret: SECRET })] });
    proxy.dropAnswers(true);
    const pass = deliverOutbox(proxied, o, { owner: 'fault-test' }).then(
      () => undefined,
      (err: unknown) => err,
    );
    // The lease commits; its answer never arrives. Then the connection is reset.
    await waitFor(
      async () => (await db.pool.query<{ n: number }>("select count(*)::int n from workhorse.outbox_events where leased_by like 'fault-test:%'")).rows[0]!.n,
      (n) => n === 6,
      { what: 'the lease to commit', timeoutMs: 10_000 },
    );
    proxy.dropAll();
    proxy.dropAnswers(false);
    const err = await pass;
    expect(err).toBeInstanceOf(OutboxFaultError);
    expect((err as Error).message).toMatch(/released the 6 event\(s\)/);
    expect(r.requests).toHaveLength(0);

    const start = Date.now();
    deliveringWorker(direct, webhookSink({ url: r.url, secret: SECRET }));
    await waitFor(delivered, (n) => n === 6, { what: 'all 6 events delivered', timeoutMs: WITHIN_MS });
    console.log(`lost lease answer: all delivered ${Date.now() - start} ms after the fault`);
    expectPerKeyOrder(r, ids);
  }, 30_000);

  it('a settlement that fails on a fault is written again once the database answers: the key goes on within seconds', async () => {
    const r = await receiver();
    const app = 'outbox-fault-deliverer';
    const worker = newClient(withUrl(db.url, (u) => u.searchParams.set('application_name', app)));
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect(); // opened before the database is set read-only: it can set it back
    closers.push(() => admin.end());
    const dbName = new URL(db.url).pathname.slice(1);
    const hook = webhookSink({ url: r.url, secret: SECRET });
    let faulted = false;
    let faultAt = 0;
    let faultEnd: Promise<unknown> = Promise.resolve();
    closers.push(() => faultEnd);
    // On the first delivery: the database goes read-only for 1.5 s and the deliverer's connections are cut.
    const faulting: Sink = {
      name: hook.name,
      async deliver(event, signal) {
        await hook.deliver(event, signal);
        if (faulted) return;
        faulted = true;
        faultAt = Date.now();
        await admin.query(`alter database ${dbName} set default_transaction_read_only = on`);
        await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and pid <> pg_backend_pid()', [app]);
        faultEnd = new Promise((res) => setTimeout(res, 1500)).then(() => admin.query(`alter database ${dbName} reset default_transaction_read_only`));
      },
    };
    const ids = await publishKeyed(worker, ['a'], 1);
    deliveringWorker(worker, faulting);
    await waitFor(delivered, (n) => n === 1, { what: 'the first event delivered', timeoutMs: WITHIN_MS });
    // The key's next events, published once the first was delivered, wait for nothing.
    await faultEnd;
    ids.get('a')!.push(...(await publishKeyed(worker, ['a'], 3)).get('a')!);
    await waitFor(delivered, (n) => n === 4, { what: 'all 4 events delivered', timeoutMs: WITHIN_MS });
    console.log(`failed settlement: all delivered ${Date.now() - faultAt} ms after the fault`);
    expect(faulted).toBe(true);
    expectPerKeyOrder(r, ids);
  }, 30_000);
});

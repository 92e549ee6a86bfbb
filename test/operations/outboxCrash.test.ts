// A deliverer SIGKILLed in the middle of a batch loses nothing: its leased
// events stay pending, and once its lease ends another deliverer sends them
// all (again, for the one that was in flight: at least once, never dropped).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Client } from '../../src/client/client.js';
import { webhookSink } from '../../src/outbox/webhookSink.js';
import { Worker } from '../../src/worker/worker.js';
import { killAll, spawnWorker, type SpawnedWorker } from '../fixtures/spawnWorker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';
import { startWebhookReceiver } from '../helpers/webhookReceiver.js';

const SECRET = 'crash-secret-0123456789';
let db: TestDatabase;
let client: Client;
const children: SpawnedWorker[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  client = new Client({ connectionString: db.url });
});
afterAll(async () => {
  killAll(children);
  await client.close();
  await db.drop();
});

it('a worker SIGKILLed mid-delivery leaves its events pending; a second deliverer delivers every one after the lease ends', async () => {
  let dying = true;
  const r = await startWebhookReceiver(SECRET, () => (dying ? 'hang' : 200));
  try {
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await client.publish('crash.test', { i }, { key: `k${i % 4}` })).id);
    const child = spawnWorker({ label: 'deliverer-1', url: db.url, hookUrl: r.url, secret: SECRET, leaseMs: 5000 }, 'outboxWorker.ts');
    children.push(child);
    // The child has leased a batch and its first deliveries are in flight (the receiver never answers them).
    await waitFor(() => r.requests.length, (n) => n >= 1, { what: 'the child to start delivering', timeoutMs: 30_000 });
    const leased = await db.pool.query<{ n: number }>("select count(*)::int n from workhorse.outbox_events where leased_by is not null and state = 'pending'");
    expect(leased.rows[0]!.n).toBe(20);
    child.child.kill('SIGKILL');
    expect((await child.exited).signal).toBe('SIGKILL');
    // Nothing was written by the dead deliverer.
    const after = await db.pool.query<{ state: string; attempts: number }>('select state, attempts from workhorse.outbox_events');
    expect(after.rows.every((x) => x.state === 'pending' && x.attempts === 0)).toBe(true);

    dying = false;
    const worker = new Worker(client, {
      queue: 'default',
      pollMs: 100,
      scheduleNamespaces: ['sys'],
      outbox: { sinks: [webhookSink({ url: r.url, secret: SECRET })], everyMs: 1000 },
    });
    const run = worker.run();
    try {
      await waitFor(
        async () => (await db.pool.query<{ n: number }>("select count(*)::int n from workhorse.outbox_events where state = 'delivered'")).rows[0]!.n,
        (n) => n === 20,
        { what: 'all 20 delivered by the second deliverer', timeoutMs: 40_000 },
      );
    } finally {
      await worker.stop();
      await run;
    }
    const accepted = new Set(r.accepted().map((q) => q.json.id));
    expect([...accepted].sort()).toEqual([...ids].sort());
    // The ones in flight when the child died were sent twice: at least once, never lost.
    const inFlight = r.requests.filter((q) => q.status === 'hang').map((q) => q.json.id);
    expect(inFlight.length).toBeGreaterThan(0);
    for (const id of inFlight) expect(accepted.has(id)).toBe(true);
  } finally {
    await r.close();
  }
});

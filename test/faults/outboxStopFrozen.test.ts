// A worker that delivers the outbox, SIGTERMed while its server hangs (every
// PostgreSQL process of a private cluster SIGSTOPped) with a delivery pass in
// flight. The pass's lease and settlement went straight to the pool with no
// bound, and the pump's stop() waited for the pass: the process never exited
// until the server answered again. Each call of a pass is now bounded by the
// outbox lease and stop() waits for the pass at most PUMP_STOP_WAIT_MS, so the
// process drains within the worker's own shutdown bound; the events it leased
// are still pending and are delivered once the server is back.
import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { startOwnCluster, type OwnCluster } from '../../certify/ownCluster.js';
import { Client } from '../../src/client/client.js';
import { webhookSink } from '../../src/outbox/webhookSink.js';
import { Worker } from '../../src/worker/worker.js';
import { killAll, spawnWorker, type SpawnedWorker } from '../fixtures/spawnWorker.js';
import { waitFor } from '../helpers/wait.js';
import { startWebhookReceiver } from '../helpers/webhookReceiver.js';

const SECRET = 'frozen-outbox-secret';
let cluster: OwnCluster;
const children: SpawnedWorker[] = [];

beforeAll(async () => {
  cluster = await startOwnCluster();
}, 60_000);

afterAll(async () => {
  killAll(children);
  cluster?.thaw();
  await cluster?.destroy();
});

it('a SIGTERMed deliverer exits within its shutdown bound against a hung server; its events are delivered afterwards', async () => {
  const client = new Client({ connectionString: cluster.url() });
  await client.migrate();
  let answering = false;
  const r = await startWebhookReceiver(SECRET, () => (answering ? 200 : 'hang'));
  try {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await client.publish('frozen.test', { i }, { key: 'k' })).id);
    // The sys.outbox cadence is an hour away, so only the pump delivers (a sys.outbox job's
    // settlement would be waited for by a graceful stop, as any job's is).
    const child = spawnWorker(
      { label: 'deliverer', url: cluster.url(), hookUrl: r.url, secret: SECRET, leaseMs: 30_000, everyMs: 3_600_000 },
      'outboxWorker.ts',
    );
    children.push(child);
    await waitFor(() => r.requests.length, (n) => n >= 1, { what: 'the pump to start delivering', timeoutMs: 30_000 });
    cluster.freeze();
    const start = Date.now();
    child.child.kill('SIGTERM');
    const outcome = await Promise.race([child.exited, new Promise((res) => setTimeout(() => res('still running after 45 s'), 45_000))]);
    const ms = Date.now() - start;
    cluster.thaw();
    expect(outcome, child.output()).toEqual({ code: 0, signal: null });
    // The worker's 26 s stop bound with its schedule companion, plus the pump's wait and the listener's close.
    expect(ms).toBeLessThan(40_000);

    // Nothing was lost: the leased events are delivered by another deliverer once the lease ends.
    answering = true;
    const direct = new pg.Pool({ connectionString: cluster.url(), max: 1 });
    const worker = new Worker(client, {
      queue: 'default',
      pollMs: 100,
      scheduleNamespaces: ['sys'],
      outbox: { sinks: [webhookSink({ url: r.url, secret: SECRET })], everyMs: 1000 },
    });
    worker.events.on('error', () => undefined);
    const run = worker.run();
    try {
      await waitFor(
        async () => (await direct.query<{ n: number }>("select count(*)::int n from workhorse.outbox_events where state = 'delivered'")).rows[0]!.n,
        (n) => n === ids.length,
        { what: 'every event delivered after the thaw', timeoutMs: 60_000 },
      );
    } finally {
      await worker.stop();
      await run;
      await direct.end();
    }
    expect(new Set(r.accepted().map((q) => q.json.id))).toEqual(new Set(ids));
  } finally {
    await r.close();
    await client.close();
  }
}, 180_000);

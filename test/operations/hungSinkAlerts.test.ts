// A sink that never answers holds a sys.outbox run for up to the outbox's
// lease. The system worker ran one sys job at a time, so sys.alerts (and
// sys.retention) waited behind it: no alert was evaluated for minutes,
// during the very incident alerts exist for; and each cadence queued
// another outbox run. Now the system worker has two slots and a sys.* slot
// fires no job while one of its type is unfinished: the alerts go on.
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Client } from '../../src/client/client.js';
import { webhookSink } from '../../src/outbox/webhookSink.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

let db: TestDatabase;
let client: Client;
let silent: Server;
let url: string;

beforeAll(async () => {
  db = await createTestDatabase();
  client = new Client({ connectionString: db.url });
  // Takes the request and never answers.
  silent = createServer(() => undefined);
  silent.listen(0, '127.0.0.1');
  await once(silent, 'listening');
  url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/hook`;
});
afterAll(async () => {
  silent?.closeAllConnections();
  silent?.close();
  await client?.close();
  await db?.drop();
});

const count = async (sql: string) => (await db.pool.query<{ n: number }>(sql)).rows[0]!.n;

it('evaluates the alerts while a sink that never answers holds an outbox run, and queues no second run', async () => {
  const worker = new Worker(client, {
    pollMs: 100,
    scheduleNamespaces: ['sys'],
    // Batches of one event: the after-commit pump holds one, a sys.outbox run the next.
    outbox: { sinks: [webhookSink({ url, secret: 'hung-sink-secret-0123456789' })], everyMs: 1000, leaseMs: 30_000, batchSize: 1 },
    alerts: { everyMs: 1000 },
  });
  const run = worker.run();
  try {
    for (let i = 0; i < 10; i++) await client.publish('order.placed', { n: i }, { key: `order-${i}` });
    // A sys.outbox run started and is held by the silent sink: still leased 2 s after it started.
    const held = "select count(*)::int n from workhorse.jobs j join workhorse.job_runtime r on r.job_id = j.id where j.type = 'sys.outbox' and r.started and j.updated_at < now() - interval '2 seconds'";
    await waitFor(() => count(held), (n) => n >= 1, { what: 'a sys.outbox run held by the sink', timeoutMs: 20_000 });
    const before = await count("select count(*)::int n from workhorse.jobs where type = 'sys.alerts' and status = 'succeeded'");
    // Several alert cadences (1 s) pass while the outbox run is held.
    await waitFor(
      () => count("select count(*)::int n from workhorse.jobs where type = 'sys.alerts' and status = 'succeeded'"),
      (n) => n >= before + 3,
      { what: 'three more sys.alerts runs while the outbox run is held', timeoutMs: 15_000 },
    );
    expect(await count(held)).toBe(1);
    // The held run is the only unfinished one: its cadences passed without queueing another.
    expect(await count("select count(*)::int n from workhorse.jobs where type = 'sys.outbox' and status = 'ready'")).toBe(1);
  } finally {
    await worker.stop({ hard: true });
    await run.catch(() => undefined);
  }
}, 60_000);

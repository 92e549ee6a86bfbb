// The readiness probe over a database that answers but takes no writes (a
// standby after a failover, or default_transaction_read_only): no claim,
// heartbeat or settlement can go through it, so /readyz is 503 and says the
// database is read-only, /livez stays 200 (restarting the process would not
// help), and /readyz is 200 again once writes are accepted. Simulated on this
// test's own database (default_transaction_read_only and its backends
// terminated, so every new connection is read-only); the shared server itself
// is not touched.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { READ_ONLY_REASON } from '../../src/db/ping.js';
import { createWorkhorseAdapter, defineJob } from '../../src/index.js';
import { runWorkerProcess } from '../../src/worker/process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { resetReadOnly, setReadOnly } from '../helpers/readOnly.js';
import { waitFor } from '../helpers/wait.js';

const Ping = defineJob({ type: 'fx.readyz.ro', schema: z.object({}) });

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await resetReadOnly(db);
  await db?.drop();
});


async function probe(port: number, path: string): Promise<{ status: number; reason?: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  const body = (await res.json()) as { reason?: string };
  return { status: res.status, ...(body.reason ? { reason: body.reason } : {}) };
}

/** A worker process with its probes on, on this test's database. */
function startProbed() {
  return runWorkerProcess(
    {
      adapter: () => createWorkhorseAdapter({ connectionString: db.url, jobs: [Ping], poolSize: 2 }),
      probes: { port: 0, host: '127.0.0.1', databaseTimeoutMs: 1_000 },
      workers: [{ options: { heartbeatMs: 5_000, pollMs: 200, concurrency: 1 }, configure: (w) => void w.handle(Ping, () => undefined) }],
    },
    { log: () => undefined },
  );
}

describe('the readiness probe over a read-only database', () => {
  it('is 503 saying the database is read-only while it is, and ready again once it takes writes; liveness stays 200', async () => {
    const running = await startProbed();
    const port = running.probePort!;
    try {
      await waitFor(() => probe(port, '/readyz'), (r) => r.status === 200, { what: 'the worker to be ready' });
      await setReadOnly(db, true);
      await waitFor(() => probe(port, '/readyz'), (r) => r.status === 503 && r.reason === READ_ONLY_REASON, { what: '/readyz to say the database is read-only', timeoutMs: 10_000 });
      expect((await probe(port, '/livez')).status).toBe(200);
      await setReadOnly(db, false);
      await waitFor(() => probe(port, '/readyz'), (r) => r.status === 200, { what: 'the worker to be ready again', timeoutMs: 15_000 });
    } finally {
      running.shutdown('test');
      await running.done;
    }
  }, 60_000);

  it('says the database is read-only, not only that the worker is not registered, when it starts on a read-only database', async () => {
    await setReadOnly(db, true);
    const running = await startProbed();
    const port = running.probePort!;
    try {
      await waitFor(() => probe(port, '/readyz'), (r) => r.status === 503 && r.reason === READ_ONLY_REASON, { what: '/readyz to say the database is read-only', timeoutMs: 10_000 });
      await setReadOnly(db, false);
      await waitFor(() => probe(port, '/readyz'), (r) => r.status === 200, { what: 'the worker to be ready once it takes writes', timeoutMs: 20_000 });
    } finally {
      running.shutdown('test');
      await running.done;
    }
  }, 60_000);
});

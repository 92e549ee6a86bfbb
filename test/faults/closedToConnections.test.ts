// A database closed to new connections for a while (ALTER DATABASE ...
// ALLOW_CONNECTIONS false, SQLSTATE 55000 at login: "database ... is not
// currently accepting connections") is a fault to wait out, as a server
// starting up is: the settlements of handlers that finish meanwhile are
// written once it opens again, and no outcome is given up. Settlements
// gave up at once on it (heartbeats and claims retried it), and a drain
// exited 3. Simulated on this test's own database; the shared server is
// not touched.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { onServer } from '../../certify/run.js';
import { createClient, defineJob, Worker } from '../../src/index.js';
import { createTestDatabase, serverUrl, type TestDatabase } from '../helpers/db.js';
import { sleep, waitFor } from '../helpers/wait.js';

const Job = defineJob({ type: 'closed.job', queue: 'closed', schema: z.object({ n: z.number() }), retry: { maxAttempts: 1 } });

let db: TestDatabase;
const allow = (on: boolean) => onServer(serverUrl(), `alter database ${db.name} allow_connections ${on}`);

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  if (db) await allow(true).catch(() => undefined);
  await db?.drop();
});

describe('a database closed to new connections for a while', () => {
  it('is waited out: the outcomes of handlers that finished meanwhile are written once it opens, none given up', async () => {
    const client = createClient({ connectionString: db.url, jobs: [Job], poolMax: 4 });
    const worker = new Worker(client, { queue: 'closed', concurrency: 3, heartbeatMs: 2_000, listen: false, pollMs: 100 });
    const errors: unknown[] = [];
    worker.events.on('error', (e) => errors.push(e));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started = 0;
    worker.handle(Job, async ({ n }) => {
      started++;
      await gate;
      return { n };
    });
    const running = worker.run();
    try {
      const jobs = await client.enqueueMany([1, 2, 3].map((n) => ({ job: Job, payload: { n } })));
      await waitFor(() => started, (s) => s === 3, { what: 'the three handlers to start' });
      await allow(false);
      await onServer(serverUrl(), `select pg_terminate_backend(pid) from pg_stat_activity where datname = '${db.name}' and pid <> pg_backend_pid()`);
      // The handlers finish while no new connection can be had: their settlements meet the refusal.
      release();
      await sleep(2_000);
      expect(errors.some((e) => /not currently accepting connections/.test(String((e as Error).message)))).toBe(true);
      await allow(true);
      const ids = jobs.map((j) => j.id);
      const rows = await waitFor(
        async () => (await db.pool.query<{ status: string; attempt: number }>('select status, attempt from workhorse.jobs where id = any($1::bigint[]) order by id', [ids])).rows,
        (r) => r.every((x) => x.status === 'succeeded'),
        { what: 'the three jobs to succeed', timeoutMs: 20_000 },
      );
      expect(rows).toEqual([1, 2, 3].map(() => ({ status: 'succeeded', attempt: 1 })));
      expect(worker.runtimeState().droppedOutcomes).toBe(0);
    } finally {
      release();
      await allow(true);
      await worker.stop();
      await running;
      await client.close();
    }
  }, 60_000);
});

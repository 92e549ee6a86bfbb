// A worker with scheduleNamespaces starts its slot runner after it
// registers. That start stores the schedules (one statement), and a
// database fault there (here: its backend terminated while it waits for a
// lock another session holds on workhorse.schedules) rejected run(): the
// worker ended, and `workhorse worker` drained the process and exited 1,
// where a terminated backend must never end a worker. The start is now
// waited out like the registration (capped backoff, one error event a try).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startOwnCluster, type OwnCluster } from '../../certify/ownCluster.js';
import { createClient, defineJob, Worker } from '../../src/index.js';
import { waitFor } from '../helpers/wait.js';

const Ping = defineJob({ type: 'companion.ping', schema: z.object({}) });
let cluster: OwnCluster;

beforeAll(async () => {
  cluster = await startOwnCluster();
}, 60_000);

afterAll(async () => {
  await cluster?.destroy();
});

describe('a worker whose schedule runner cannot start for a database fault', () => {
  it('stays up, starts the runner once the database lets it, and runs jobs', async () => {
    const client = createClient({ connectionString: cluster.url(), jobs: [Ping] });
    await client.migrate();
    const admin = new pg.Client({ connectionString: cluster.url() });
    await admin.connect();
    const locker = new pg.Client({ connectionString: cluster.url() });
    await locker.connect();
    const errors: string[] = [];
    let handled = 0;
    const worker = new Worker(client, { heartbeatMs: 500, pollMs: 100, scheduleNamespaces: ['sys'] });
    worker.events.on('error', (err) => errors.push(String(err)));
    worker.handle(Ping, () => void handled++);
    let ended: string | undefined;
    try {
      await locker.query('begin');
      await locker.query('lock table workhorse.schedules in access exclusive mode');
      const run = worker.run().then(
        () => (ended = 'resolved'),
        (err: unknown) => (ended = `rejected: ${String(err)}`),
      );
      const waiting = await waitFor(
        async () =>
          (
            await admin.query<{ pid: number }>(
              `select pid from pg_stat_activity where wait_event_type = 'Lock' and pid <> pg_backend_pid() and datname = current_database()`,
            )
          ).rows,
        (rows) => rows.length > 0,
        { what: 'the schedule runner to wait for the lock' },
      );
      await admin.query('select pg_terminate_backend($1)', [waiting[0]!.pid]);
      await new Promise((r) => setTimeout(r, 1_000));
      expect(ended).toBeUndefined();
      expect(worker.runtimeState().running).toBe(true);
      await locker.query('commit');
      await waitFor(
        async () => (await admin.query<{ n: number }>(`select count(*)::int n from workhorse.schedules`)).rows[0]!.n,
        (n) => n > 0,
        { what: 'the schedule runner to store its schedules', timeoutMs: 15_000 },
      );
      await client.enqueue(Ping, {});
      await waitFor(() => handled, (n) => n === 1, { what: 'the job to run', timeoutMs: 15_000 });
      expect(errors.join('\n')).toMatch(/terminat/);
      await worker.stop();
      await run;
      expect(ended).toBe('resolved');
    } finally {
      await locker.end().catch(() => undefined);
      await admin.end();
      await worker.stop().catch(() => undefined);
      await client.close();
    }
  }, 60_000);
});

// A protocol call that outlasts its timeout is ended on the client's side by
// destroying the socket. The backend used to go on: a claim waiting on a
// lock (here, an operator's LOCK TABLE; in the field a migration, a long
// transaction) ran to its commit once the lock was released, leasing jobs
// that no worker would run, whose recovery then counted an attempt for a
// handler that never started. The pools workhorse makes set
// client_connection_check_interval, so such a backend notices its client is
// gone and rolls back while it waits.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, type Client } from '../../src/index.js';
import { GuardedDb } from '../../src/db/guardedDb.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Job = defineJob({ type: 'orphan.job', queue: 'orphan', schema: z.object({ n: z.number() }) });
let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Job] });
  await client.ready();
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

/** The backends of the test database still running a claim. */
async function claimsRunning(): Promise<number> {
  const r = await db.pool.query<{ n: number }>(
    `select count(*)::integer as n from pg_stat_activity
      where datname = current_database() and state = 'active' and query like '%claim_many_v1%' and pid <> pg_backend_pid()`,
  );
  return r.rows[0]!.n;
}

describe('a claim whose call timed out while it waited on a lock', () => {
  it('every connection of the pool checks for a vanished client', async () => {
    const r = await client.pool.query<{ v: string }>("select current_setting('client_connection_check_interval') as v");
    expect(r.rows[0]!.v).toBe('1s');
  });

  it('is rolled back by its backend, so no job is leased to a worker that gave up on it', async () => {
    await client.enqueueMany([0, 1, 2].map((n) => ({ job: Job, payload: { n } })));
    const workerId = 'orphan-worker';
    await client.protocol.registerWorker(client.pool, client.namespace, {
      workerId,
      build: 'test',
      kind: 'process',
      queues: ['orphan'],
      types: [Job.type],
      concurrency: 3,
      heartbeatMs: 30_000,
      deadline: null,
    });
    // An operator's session holds a lock the claim's row locks wait behind.
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('lock table workhorse.jobs in exclusive mode');
      const guarded = new GuardedDb(client.pool, { timeoutMs: 300 });
      await expect(
        client.protocol.claimMany(guarded, client.namespace, { workerId, queues: ['orphan'], types: [Job.type], limit: 3, leaseMs: 60_000 }),
      ).rejects.toThrow();
      // The backend notices its client is gone while it still waits on the lock, and ends.
      await waitFor(claimsRunning, (n) => n === 0, { what: 'the orphaned claim to end', timeoutMs: 10_000 });
    } finally {
      await holder.query('commit').catch(() => undefined);
      await holder.end();
    }
    const leases = await db.pool.query('select job_id from workhorse.job_runtime');
    expect(leases.rows).toEqual([]);
    // The jobs are still there to claim, none of them charged an attempt.
    const jobs = await db.pool.query<{ attempt: number; status: string }>('select attempt, status from workhorse.jobs order by id');
    expect(jobs.rows).toEqual([0, 1, 2].map(() => ({ attempt: 0, status: 'ready' })));
  });
});

// A settlement PostgreSQL cancels (SQLSTATE 57014: a statement_timeout or
// pg_cancel_backend) is written again while the worker still holds the
// lease, so the handler's outcome is kept and no attempt is counted. The
// tests hold the job row locked so the settlement blocks, have it cancelled
// (pg_cancel_backend, or a statement_timeout set on a login role made for
// the test), and check that the worker writes it again instead of
// dropping the lease for recovery to find (which would run the job twice),
// and that the repeats are bounded: past its window a cancellation gives up.
import pg from 'pg';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, defineJob, Worker, type Client } from '../../src/index.js';
import * as protocol from '../../src/db/protocol.js';
import { Settler, type SettleCallback } from '../../src/worker/settler.js';
import { createTestDatabase, registerWorkerRow, type TestDatabase } from '../helpers/db.js';
import { createRuntimeLogin } from '../helpers/runtimeLogin.js';
import { waitFor } from '../helpers/wait.js';
import { latch } from './support/latch.js';

const Quick = defineJob({ type: 'cancelled.quick', schema: z.object({}), retry: { maxAttempts: 3 } });

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Quick], poolMax: 4 });
});
afterAll(async () => {
  await client.close();
  await db.drop();
});

/** The settlement statements waiting on a lock `lockerPid` holds. */
async function blockedSettlements(lockerPid: number): Promise<number[]> {
  const r = await db.pool.query<{ pid: number }>(
    `select pid from pg_stat_activity where $1 = any(pg_blocking_pids(pid)) and query like '%complete_many_v1%'`,
    [lockerPid],
  );
  return r.rows.map((x) => x.pid);
}

/**
 * Runs one Quick job on a worker of `on`, holds its row locked while it
 * settles, lets `cancel` cancel the blocked settlement, and checks that the
 * worker writes it again (the lease still held) rather than giving up; then
 * releases the row and checks the job succeeded once, on its first attempt.
 */
async function settleThroughCancellation(on: Client, cancel: (pid: number) => Promise<void>): Promise<void> {
  const started = latch();
  const release = latch();
  let runs = 0;
  const cancelled: unknown[] = [];
  const worker = new Worker(on, { concurrency: 1, pollMs: 50 }).handle(Quick, async () => {
    runs++;
    started.open();
    await release.promise;
    return 'done';
  });
  worker.events.on('error', (err) => {
    if ((err as { code?: string }).code === '57014') cancelled.push(err);
  });
  const job = await on.enqueue(Quick, {});
  const run = worker.run();
  const locker: pg.PoolClient = await db.pool.connect();
  try {
    await started.promise;
    // The claim is done; lock the job row so the settlement blocks on it.
    await locker.query('begin');
    await locker.query('select 1 from workhorse.jobs where id = $1 for update', [job.id]);
    const lockerPid = (await locker.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    release.open();

    const [first] = await waitFor(() => blockedSettlements(lockerPid), (p) => p.length === 1, { what: 'the settlement to block' });
    await cancel(first!);
    await waitFor(() => cancelled.length, (n) => n >= 1, { what: 'the worker to see the cancellation' });

    // Either the worker writes the settlement again (it blocks once more,
    // the lease still held) or it gave up (the lease left its table).
    const after = await waitFor(
      async () => ({ retried: (await blockedSettlements(lockerPid)).length === 1, held: worker.runtimeState().activeJobIds.includes(job.id) }),
      (s) => s.retried || !s.held,
      { what: 'the settlement to be written again or dropped' },
    );
    expect(after).toEqual({ retried: true, held: true });

    await locker.query('commit');
    const settled = await waitFor(() => client.getJob(job.id), (j) => j!.status === 'succeeded', { what: 'the job to succeed' });
    expect(settled!.attempt).toBe(1);
    expect(settled!.result).toBe('done');
    expect(runs).toBe(1);
    const ledger = await db.pool.query('select count(*)::int as n from workhorse.job_attempts where job_id = $1', [job.id]);
    expect(ledger.rows[0].n).toBe(0);
  } finally {
    await locker.query('rollback').catch(() => undefined);
    locker.release();
    await worker.stop();
    await run;
  }
}

describe('a settlement PostgreSQL cancels', () => {
  it('is written again while the lease is held: the job succeeds once, on its first attempt (pg_cancel_backend)', async () => {
    await settleThroughCancellation(client, async (pid) => {
      await db.pool.query('select pg_cancel_backend($1)', [pid]);
    });
  });

  it("is written again when the worker's role has a statement_timeout the blocked settlement outlasts", async () => {
    const login = await createRuntimeLogin(db.url, { prefix: 'wh_cancel' });
    let limited: Client | undefined;
    try {
      await db.pool.query(`alter role ${login.name} set statement_timeout = '300ms'`);
      limited = createClient({ connectionString: login.url, jobs: [Quick], poolMax: 4 });
      // PostgreSQL cancels it: nothing to do but wait.
      await settleThroughCancellation(limited, async () => undefined);
    } finally {
      await limited?.close();
      await login.drop();
    }
  });

  it('gives up once its window has passed, leaving the lease to recovery', async () => {
    const job = await client.enqueue(Quick, {});
    await registerWorkerRow(client.pool, client.namespace, 'cancelled-bound', [Quick.type]);
    const [claimed] = await protocol.claimMany(client.pool, client.namespace, {
      workerId: 'cancelled-bound',
      queues: ['default'],
      types: [Quick.type],
      limit: 1,
      leaseMs: 60_000,
    });
    expect(claimed!.id).toBe(job.id);
    const retried: unknown[] = [];
    // A window of 0: the first cancellation is already past it.
    const settler = new Settler(client.pool, client.namespace, (err) => retried.push(err), undefined, { cancelledRetryMs: 0 });
    const locker = await db.pool.connect();
    try {
      await locker.query('begin');
      await locker.query('select 1 from workhorse.jobs where id = $1 for update', [job.id]);
      const lockerPid = (await locker.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      const settled = new Promise<Parameters<SettleCallback>>((resolve) =>
        settler.complete({ id: claimed!.id, execution: claimed!.execution, resultJson: '1' }, (...a) => resolve(a)),
      );
      const [pid] = await waitFor(() => blockedSettlements(lockerPid), (p) => p.length === 1, { what: 'the settlement to block' });
      await db.pool.query('select pg_cancel_backend($1)', [pid]);
      const [outcome, error] = await settled;
      expect(outcome).toBeUndefined();
      expect((error as { code?: string }).code).toBe('57014');
      expect(retried).toEqual([]);
    } finally {
      await locker.query('rollback').catch(() => undefined);
      locker.release();
    }
    expect((await client.getJob(job.id))!.status).toBe('running');
  });
});

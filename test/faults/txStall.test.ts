// Scenario 6: a worker stalls (SIGSTOP) inside a transactional step, holding
// the lock on its lease row. Before, recovery skipped that locked row for as
// long as the stalled connection lived. Now the step's session carries
// idle_in_transaction_session_timeout (two heartbeats): PostgreSQL ends the
// stalled transaction, the lease expires, a peer's recovery returns the job
// and a peer finishes it, all within lease + idle timeout + a heartbeat or
// two. The stalled process, resumed, finds its lease gone and carries on.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/client.js';
import { migrate } from '../../src/db/migrate.js';
import { startOwnCluster, type OwnCluster } from '../../certify/ownCluster.js';
import { onServer, withDatabase } from '../../certify/run.js';
import { faultJobs } from '../fixtures/faultJobs.js';
import { killAll, spawnWorker, type SpawnedWorker } from '../fixtures/spawnWorker.js';
import { waitFor } from '../helpers/wait.js';

const HEARTBEAT_MS = 500;
const LEASE_MS = 4 * HEARTBEAT_MS;
const TX_IDLE_MS = 2 * HEARTBEAT_MS;
/** The documented bound, plus room for a loaded test machine. */
const BOUND_MS = LEASE_MS + TX_IDLE_MS + 2 * HEARTBEAT_MS + 3000;

let cluster: OwnCluster;
let url: string;
let pool: pg.Pool;
const workers: SpawnedWorker[] = [];

beforeAll(async () => {
  cluster = await startOwnCluster();
  const name = `wh_stall_${randomBytes(4).toString('hex')}`;
  await onServer(cluster.url(), `create database ${name}`);
  url = withDatabase(cluster.url(), name);
  await migrate({ connectionString: url });
  pool = new pg.Pool({ connectionString: url, max: 2 });
  await pool.query('create table fx_pids (job_id bigint, execution int, pid int)');
  await pool.query('create table fx_tx (job_id bigint, execution int)');
});

afterAll(async () => {
  killAll(workers);
  await pool?.end();
  await cluster?.destroy();
});

describe('a transactional step whose worker stalls', () => {
  it('is ended by the server, and its job is recovered and finished by a peer within the documented bound', async () => {
    for (let i = 0; i < 3; i++) {
      workers.push(spawnWorker({ url, label: `stall-${i}`, heartbeatMs: HEARTBEAT_MS, concurrency: 2 }, 'faultWorker.ts'));
    }
    const client = createClient({ connectionString: url, jobs: faultJobs });
    const { id } = await client.enqueue('fx.stall', {}, { maxAttempts: 5, backoff: { kind: 'fixed', baseMs: 0, maxMs: 0 } }).catch(async (err) => {
      await client.close();
      throw err;
    });
    await client.close();

    // Inside the transactional step: its backend is idle in a transaction.
    const pid = (
      await waitFor(
        () => pool.query<{ pid: number }>('select pid from fx_pids where job_id = $1', [id]).then((r) => r.rows[0]?.pid),
        (p) => p !== undefined,
        { what: 'the step to record its pid' },
      )
    )!;
    await waitFor(
      () =>
        pool
          .query<{ n: number }>(
            `select count(*)::int as n from pg_stat_activity where state = 'idle in transaction' and query like '%fx_tx%'`,
          )
          .then((r) => r.rows[0]!.n),
      (n) => n > 0,
      { what: 'the transactional step to be open', intervalMs: 10 },
    );
    process.kill(pid, 'SIGSTOP');
    const stalledAt = Date.now();
    try {
      const job = await waitFor(
        () => pool.query<{ status: string; execution: number }>('select status, execution::int as execution from workhorse.jobs where id = $1', [id]).then((r) => r.rows[0]!),
        (j) => j.status === 'succeeded',
        { what: 'a peer to finish the job', timeoutMs: 30_000 },
      );
      const tookMs = Date.now() - stalledAt;
      expect(tookMs).toBeLessThan(BOUND_MS);
      expect(job.execution).toBeGreaterThan(1);
      expect(cluster.log()).toMatch(/idle-in-transaction timeout/);
      // The stalled step's insert rolled back with its transaction: one effect, from the execution that finished.
      const effects = await pool.query<{ execution: number }>('select execution from fx_tx where job_id = $1', [id]);
      expect(effects.rows).toEqual([{ execution: job.execution }]);
      const leases = await pool.query('select 1 from workhorse.job_runtime where job_id = $1', [id]);
      expect(leases.rowCount).toBe(0);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    // The resumed worker finds its lease gone, and lives on.
    await new Promise((r) => setTimeout(r, 2 * LEASE_MS));
    const stalled = workers.find((w) => w.pid === pid)!;
    expect(stalled.child.exitCode).toBeNull();
    expect(stalled.child.signalCode).toBeNull();
    for (const w of workers) w.child.kill('SIGTERM');
    const exits = await Promise.all(workers.map((w) => w.exited));
    expect(exits.map((e) => e.code)).toEqual([0, 0, 0]);
  }, 90_000);
});

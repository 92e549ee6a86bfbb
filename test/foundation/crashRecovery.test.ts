// Foundation (2): a worker process killed with SIGKILL in the middle of a
// handler loses nothing. Once its lease expires, a recovery pass makes the
// job ready again with the attempt counted; a job that kills its worker
// every time ends `failed` after max_attempts instead of looping forever.
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { sleep, waitFor } from '../helpers/wait.js';
import { createRunLog, killAll, spawnWorker, waitRegistered, type SpawnedWorker } from '../fixtures/spawnWorker.js';
import { attemptsOf, jobRow } from './support/rows.js';

/** Short heartbeat: the lease is 4 x 200 ms. */
const HEARTBEAT_MS = 200;
const FxJob = defineJob({ type: 'fx.job', schema: z.object({}).passthrough() });

let db: TestDatabase;
let client: Client;
const workers: SpawnedWorker[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  await createRunLog(db.pool);
  client = createClient({ connectionString: db.url, jobs: [FxJob], poolMax: 2 });
});

afterEach(() => killAll(workers));

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

function start(label: string, mode: 'record' | 'hang' | 'suicide'): SpawnedWorker {
  const w = spawnWorker({ url: db.url, label, mode, heartbeatMs: HEARTBEAT_MS, pollMs: 100 });
  workers.push(w);
  return w;
}

async function runsOf(pool: pg.Pool, id: string): Promise<{ label: string; execution: number }[]> {
  const r = await pool.query('select label, execution from fx_runs where job_id = $1 order by id', [id]);
  return r.rows;
}

/** Waits until no lease of the namespace is still in date (database clock). */
async function waitLeasesExpired(): Promise<void> {
  await waitFor(
    async () => (await db.pool.query<{ n: number }>('select count(*)::int as n from workhorse.job_runtime where expires_at >= now()')).rows[0]!.n,
    (n) => n === 0,
    { what: 'every lease to expire' },
  );
}

describe('a worker killed with SIGKILL mid-handler', () => {
  it('gets its job back to ready through the recovery pass after the lease expires, with the attempt counted', async () => {
    const { id } = await client.enqueue(FxJob, {}, { maxAttempts: 5 });
    const victim = start('victim', 'hang');
    await waitFor(() => runsOf(db.pool, id), (r) => r.length === 1, { what: 'the handler to start' });

    const running = await jobRow(db.pool, id);
    expect(running).toMatchObject({ status: 'running', attempt: 1, execution: 1 });
    const lease = await db.pool.query('select worker_id, execution::int as execution from workhorse.job_runtime where job_id = $1', [id]);
    expect(lease.rows).toEqual([{ worker_id: 'victim', execution: 1 }]);

    process.kill(victim.pid, 'SIGKILL');
    expect(await victim.exited).toEqual({ code: null, signal: 'SIGKILL' });

    // Nothing settles the job: it stays running until its lease runs out.
    expect((await jobRow(db.pool, id)).status).toBe('running');
    await waitLeasesExpired();
    expect(await client.admin.recoverExpired()).toBe(1);

    const recovered = await jobRow(db.pool, id);
    expect(recovered).toMatchObject({ status: 'ready', attempt: 1, execution: 1, finished_at: null });
    expect(recovered.last_error).toMatchObject({ name: 'LeaseExpired' });
    expect(recovered.last_error?.message).toContain('victim');
    expect(await attemptsOf(db.pool, id)).toEqual([{ execution: 1, attempt: 1, outcome: 'recovered', worker_id: 'victim' }]);
    const leases = await db.pool.query('select * from workhorse.job_runtime where job_id = $1', [id]);
    expect(leases.rows).toEqual([]);

    // A healthy worker picks it up and finishes it as attempt 2.
    start('rescuer', 'record');
    await waitFor(() => jobRow(db.pool, id), (j) => j.status === 'succeeded', { what: 'the job to succeed' });
    const done = await jobRow(db.pool, id);
    expect(done).toMatchObject({ status: 'succeeded', attempt: 2, execution: 2, result: { by: 'rescuer' } });
    expect(await attemptsOf(db.pool, id)).toEqual([
      { execution: 1, attempt: 1, outcome: 'recovered', worker_id: 'victim' },
      { execution: 2, attempt: 2, outcome: 'succeeded', worker_id: 'rescuer' },
    ]);
    expect(await runsOf(db.pool, id)).toEqual([
      { label: 'victim', execution: 1 },
      { label: 'rescuer', execution: 2 },
    ]);
  });

  it("lets a live worker's heartbeat run the recovery pass that returns a dead worker's job", async () => {
    const { id } = await client.enqueue(FxJob, {}, { maxAttempts: 5 });
    const victim = start('victim-2', 'hang');
    await waitFor(() => runsOf(db.pool, id), (r) => r.length === 1, { what: 'the handler to start' });
    process.kill(victim.pid, 'SIGKILL');
    await victim.exited;

    // No admin call: the peer's own heartbeat recovers the job and claims it.
    const peer = start('peer', 'record');
    await waitRegistered(db.pool, ['peer'], [peer]);
    await waitFor(() => jobRow(db.pool, id), (j) => j.status === 'succeeded', { what: 'the job to succeed' });
    expect(await attemptsOf(db.pool, id)).toEqual([
      { execution: 1, attempt: 1, outcome: 'recovered', worker_id: 'victim-2' },
      { execution: 2, attempt: 2, outcome: 'succeeded', worker_id: 'peer' },
    ]);
    // Silent for 7 heartbeats, the dead worker is marked dead by the peer's recovery passes.
    const state = async () =>
      (await db.pool.query<{ state: string }>(`select state from workhorse.worker_registry where id = 'victim-2'`)).rows[0]?.state;
    await waitFor(state, (s) => s === 'dead', { what: 'the killed worker to be marked dead' });
    expect(await state()).toBe('dead');
    const peerState = await db.pool.query(`select state from workhorse.worker_registry where id = 'peer'`);
    expect(peerState.rows).toEqual([{ state: 'active' }]);
  });

  it('ends a job that kills its worker every time `failed` after max_attempts', async () => {
    const MAX = 3;
    const { id } = await client.enqueue(FxJob, {}, { maxAttempts: MAX });

    for (let attempt = 1; attempt <= MAX; attempt++) {
      const w = start(`suicide-${attempt}`, 'suicide');
      expect(await w.exited).toMatchObject({ signal: 'SIGKILL' });
      expect(await jobRow(db.pool, id)).toMatchObject({ status: 'running', attempt });
      await waitLeasesExpired();
      expect(await client.admin.recoverExpired()).toBe(1);
      const after = await jobRow(db.pool, id);
      expect(after.status).toBe(attempt < MAX ? 'ready' : 'failed');
      expect(after.attempt).toBe(attempt);
    }

    const failed = await jobRow(db.pool, id);
    expect(failed).toMatchObject({ status: 'failed', attempt: MAX, execution: MAX });
    expect(failed.finished_at).toBeInstanceOf(Date);
    expect(failed.last_error).toMatchObject({ name: 'LeaseExpired' });
    const ledger = await attemptsOf(db.pool, id);
    expect(ledger.map((a) => [a.attempt, a.outcome])).toEqual([
      [1, 'recovered'],
      [2, 'recovered'],
      [3, 'recovered'],
    ]);
    expect((await runsOf(db.pool, id)).map((r) => r.execution)).toEqual([1, 2, 3]);

    // A failed job is terminal: another recovery pass and a healthy worker leave it alone.
    expect(await client.admin.recoverExpired()).toBe(0);
    const healthy = start('healthy', 'record');
    await waitRegistered(db.pool, ['healthy'], [healthy]);
    await sleep(3 * HEARTBEAT_MS);
    expect(await jobRow(db.pool, id)).toMatchObject({ status: 'failed', attempt: MAX });
  });
});

// Foundation (1): several worker processes — separate OS processes, each
// with its own pool — claim from one queue at once. No job runs twice at
// the same time, and every job is settled exactly once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';
import { createRunLog, killAll, spawnWorker, waitRegistered, type SpawnedWorker } from '../fixtures/spawnWorker.js';

const PROCESSES = 4;
const JOBS = 400;
const FxJob = defineJob({ type: 'fx.job', schema: z.object({ n: z.number().int() }) });

let db: TestDatabase;
let client: Client;
const workers: SpawnedWorker[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  await createRunLog(db.pool);
  client = createClient({ connectionString: db.url, jobs: [FxJob], poolMax: 2 });
});

afterAll(async () => {
  killAll(workers);
  await client?.close();
  await db?.drop();
});

describe('concurrent worker processes on one queue', () => {
  it('never run the same job twice concurrently and settle every job exactly once', async () => {
    const labels = Array.from({ length: PROCESSES }, (_, i) => `proc-${i}`);
    for (const label of labels) {
      workers.push(spawnWorker({ url: db.url, label, mode: 'record', heartbeatMs: 1000, concurrency: 4, workMs: 2, pollMs: 100 }));
    }
    await waitRegistered(db.pool, labels, workers);

    await client.enqueueMany(Array.from({ length: JOBS }, (_, n) => ({ job: FxJob, payload: { n } })));

    await waitFor(
      async () => (await db.pool.query<{ n: number }>(`select count(*)::int as n from workhorse.jobs where status = 'succeeded'`)).rows[0]!.n,
      (n) => n === JOBS,
      { timeoutMs: 45_000, what: `${JOBS} succeeded jobs` },
    );

    // Every job: status succeeded, one attempt, one execution.
    const jobs = await db.pool.query<{ status: string; attempt: number; execution: number; n: number }>(
      'select status, attempt, execution::int as execution, count(*)::int as n from workhorse.jobs group by 1, 2, 3',
    );
    expect(jobs.rows).toEqual([{ status: 'succeeded', attempt: 1, execution: 1, n: JOBS }]);

    // The attempts ledger: nothing but first-attempt successes happened, and
    // those are held by the job rows alone (the ledger records retries,
    // failures, recoveries and later successes).
    const ledger = await db.pool.query<{ n: number }>('select count(*)::int as n from workhorse.job_attempts');
    expect(ledger.rows).toEqual([{ n: 0 }]);

    // The handlers' own log: each job ran once, and finished.
    const runs = await db.pool.query<{ job_id: string; n: number; unfinished: number }>(
      'select job_id, count(*)::int as n, count(*) filter (where ended_at is null)::int as unfinished from fx_runs group by job_id',
    );
    expect(runs.rows).toHaveLength(JOBS);
    for (const row of runs.rows) expect(row).toMatchObject({ n: 1, unfinished: 0 });

    // No two runs of one job overlap in time (checked generally, whatever
    // the count per job).
    const overlaps = await db.pool.query<{ n: number }>(
      `select count(*)::int as n from fx_runs a join fx_runs b
         on a.job_id = b.job_id and a.id < b.id
        and a.started_at < coalesce(b.ended_at, 'infinity') and b.started_at < coalesce(a.ended_at, 'infinity')`,
    );
    expect(overlaps.rows[0]!.n).toBe(0);

    // Every run was settled under the fence it ran with (only the lease's
    // owner can settle it: the job row took that execution).
    const settledByRunner = await db.pool.query<{ n: number }>(
      `select count(*)::int as n from fx_runs r join workhorse.jobs j
         on j.id = r.job_id and j.execution = r.execution and j.status = 'succeeded'`,
    );
    expect(settledByRunner.rows[0]!.n).toBe(JOBS);

    // The work really was shared between processes.
    const pids = await db.pool.query<{ n: number }>('select count(distinct pid)::int as n from fx_runs');
    expect(pids.rows[0]!.n).toBeGreaterThan(1);

    // SIGTERM drains each process; each deregisters and exits cleanly.
    for (const w of workers) w.child.kill('SIGTERM');
    const exits = await Promise.all(workers.map((w) => w.exited));
    for (const e of exits) expect(e).toEqual({ code: 0, signal: null });
    const registry = await db.pool.query('select id from workhorse.worker_registry');
    expect(registry.rows).toEqual([]);
  });
});

// `workhorse tick` (a child process) whose server hangs in the middle of its
// batch (every PostgreSQL process of a private cluster SIGSTOPped: sockets
// open, nothing answered). The tick's calls were bounded only by a protocol
// call's 60 s, and its start, slot, backlog and outbox calls not at all, so
// a 10 s tick took over a minute to give up. Every call of a tick now ends
// by its deadline (less an eighth of the safety margin): the tick fails
// with DatabaseUnavailableError within its budget, and what it leased is
// recovered by the next tick, each job done once. A hang while its handlers
// run (no claim in flight) fails it too, rather than a summary of outcomes
// it could not write.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { startOwnCluster, type OwnCluster } from '../../certify/ownCluster.js';
import { Client } from '../../src/client/client.js';
import { DatabaseUnavailableError } from '../../src/errors.js';
import { runTick } from '../../src/tick/runTick.js';
import app, { SleepJob } from '../fixtures/tick-app.js';
import { waitFor } from '../helpers/wait.js';

const BUDGET_MS = 10_000;
const JOBS = 120;
let cluster: OwnCluster;

beforeAll(async () => {
  cluster = await startOwnCluster();
}, 60_000);

afterAll(async () => {
  cluster?.thaw();
  await cluster?.destroy();
});

/** The cluster migrated and holding just `count` jobs of `ms` each; `fn` gets its URL and a one-connection pool on it. Thawed after. */
async function withJobs(count: number, ms: number, fn: (url: string, direct: pg.Pool) => Promise<void>): Promise<void> {
  const url = cluster.url();
  const client = new Client({ connectionString: url, jobs: [SleepJob] });
  const direct = new pg.Pool({ connectionString: url, max: 1 });
  direct.on('error', () => undefined);
  try {
    await client.migrate();
    await direct.query('truncate workhorse.jobs cascade');
    await client.enqueueMany(Array.from({ length: count }, () => ({ job: SleepJob, payload: { ms } })));
    await fn(url, direct);
  } finally {
    cluster.thaw();
    await direct.end();
    await client.close();
  }
}

it('a tick whose server hangs mid-batch exits within its budget; the next tick finishes every job once', async () => {
  await withJobs(JOBS, 200, async (url, direct) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'tick', 'test/fixtures/tick-app.ts', '--budget-ms', String(BUDGET_MS), '--concurrency', '5'],
      { env: { ...process.env, DATABASE_URL: url }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // The tick is mid-batch: some jobs done, most still to claim.
    await waitFor(
      async () => (await direct.query<{ n: number }>("select count(*)::int n from workhorse.jobs where status = 'succeeded'")).rows[0]!.n,
      (n) => n >= 5,
      { what: 'the tick to finish some jobs', timeoutMs: 30_000, intervalMs: 20 },
    );
    const start = Date.now();
    cluster.freeze();
    const outcome = await Promise.race([exited, new Promise((r) => setTimeout(() => r('still running after 40 s'), 40_000))]);
    const ms = Date.now() - start;
    cluster.thaw();
    expect(outcome, stderr).toBe(1);
    // Within the budget, plus the pending connection attempts' own 2.5 s timeout that keeps the process up after the tick returned.
    expect(ms).toBeLessThan(BUDGET_MS + 4_000);
    expect(stderr).toMatch(/workhorse tick: .*database/);

    // The leases it left expire (4 heartbeats of 2.5 s) and the next ticks recover them.
    const left = JOBS - (await direct.query<{ n: number }>("select count(*)::int n from workhorse.jobs where status = 'succeeded'")).rows[0]!.n;
    expect(left).toBeGreaterThan(0);
    await waitFor(
      async () => {
        await runTick({ app, connectionString: url, deadline: new Date(Date.now() + 15_000), concurrency: 10 });
        return (await direct.query<{ status: string; attempts: number }>('select status, count(*)::int attempts from workhorse.jobs group by 1')).rows;
      },
      (rows) => rows.length === 1 && rows[0]!.status === 'succeeded',
      { what: 'every job succeeded', timeoutMs: 90_000, intervalMs: 500 },
    );
    // Each job ran to success once: no job has a succeeded attempt beside another.
    const twice = await direct.query<{ n: number }>(
      "select count(*)::int n from workhorse.job_attempts where outcome = 'succeeded' group by job_id having count(*) > 1",
    );
    expect(twice.rows).toEqual([]);
  });
}, 240_000);

it('a tick whose server hangs while its handlers run fails instead of reporting a summary of outcomes it could not write', async () => {
  await withJobs(5, 4_500, async (url, direct) => {
    // Claims stop at 4 s; the handlers end at about 4.5 s, with the server hung since they started.
    const ticking = runTick({ app, connectionString: url, deadline: new Date(Date.now() + 8_000), safetyMarginMs: 4_000, concurrency: 5, log: () => undefined }).then(
      (summary) => summary,
      (err: unknown) => err,
    );
    await waitFor(
      async () => (await direct.query<{ n: number }>('select count(*)::int n from workhorse.job_runtime')).rows[0]!.n,
      (n) => n === 5,
      { what: 'the five jobs to be running', timeoutMs: 3_000, intervalMs: 20 },
    );
    cluster.freeze();
    const outcome = await ticking;
    cluster.thaw();
    expect(outcome).toBeInstanceOf(DatabaseUnavailableError);
    expect((outcome as Error).message).toMatch(/could not write the outcome of 5 jobs/);
  });
}, 60_000);

// A tick process killed with SIGKILL mid-run loses nothing: its leases
// expire, the next tick's recovery pass (part of its start) returns the jobs
// and they complete.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/index.js';
import fixture, { SleepJob } from '../fixtures/tick-app.js';
import { runTick } from '../../src/tick/runTick.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';
import { fixtureApp, freshHandler, lambdaContext, repoRoot, scheduledEvent } from './support.js';

let db: TestDatabase;
let client: Client;
let child: ChildProcess | undefined;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [SleepJob], poolMax: 2 });
});

afterAll(async () => {
  // Only if the test failed before killing it.
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await client.close();
  await db.drop();
});

describe('a tick killed mid-run', () => {
  it('has its jobs returned by the next tick, which completes them all', async () => {
    // Each job hangs on its first attempt and succeeds on the next.
    const jobs = await Promise.all([1, 2, 3, 4].map(() => client.enqueue(SleepJob, { ms: 20, hangFirst: true })));
    const env = { DATABASE_URL: db.url, WORKHORSE_APP: fixtureApp, WORKHORSE_HEARTBEAT_MS: '200' };
    const tick = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'test', 'fixtures', 'tick-child.ts'), '60000'], {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = tick;
    let output = '';
    tick.stdout.on('data', (d: Buffer) => (output += d.toString()));
    tick.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) => tick.on('exit', (_code, signal) => resolve(signal)));

    // Killed once its handlers run: the beat it sends after starting them has marked their leases started
    // (its claim marks none), so recovery counts their attempts.
    await waitFor(
      async () => (await db.pool.query<{ n: number }>('select count(*)::int as n from workhorse.job_runtime where started')).rows[0]!.n,
      (n) => n === 4,
      { timeoutMs: 30_000, what: `the child tick to claim all 4 jobs and start them (child output: ${output})` },
    );
    const holder = await db.pool.query<{ worker_id: string }>('select distinct worker_id from workhorse.job_runtime');
    expect(holder.rows).toHaveLength(1);
    expect(holder.rows[0]!.worker_id).toMatch(/^tick:workhorse-tick-child:/);

    tick.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    // The leases (4 heartbeats of 200 ms) run out; nobody else touched them yet.
    await waitFor(
      async () =>
        (await db.pool.query<{ n: number }>('select count(*)::int as n from workhorse.job_runtime where expires_at < now()')).rows[0]!
          .n,
      (n) => n === 4,
      { timeoutMs: 10_000, what: 'the killed tick’s leases to expire' },
    );

    const handler = await freshHandler(env);
    const summary = await handler(scheduledEvent(), lambdaContext(5000));
    expect(summary).toMatchObject({ recovered: 4, claimed: 4, succeeded: 4, failed: 0, retried: 0 });

    for (const { id } of jobs) {
      const job = await client.getJob(id);
      expect(job).toMatchObject({ status: 'succeeded', attempt: 2, execution: 2 });
    }
    const ledger = await db.pool.query<{ outcome: string; n: number }>(
      'select outcome, count(*)::int as n from workhorse.job_attempts group by outcome order by outcome',
    );
    expect(ledger.rows).toEqual([
      { outcome: 'recovered', n: 4 },
      { outcome: 'succeeded', n: 4 },
    ]);
    expect((await db.pool.query('select 1 from workhorse.job_runtime')).rowCount).toBe(0);
  });

  it('counts in its summary the leases its heartbeats recover, not only its start’s', async () => {
    await db.pool.query('truncate workhorse.jobs cascade');
    await Promise.all([1, 2, 3].map(() => client.enqueue(SleepJob, { ms: 20, hangFirst: true })));
    // The killed tick's leases last 4 s (heartbeat 1 s): the next tick starts before they expire, so its start
    // recovers nothing, and its heartbeats (200 ms) recover them as they run out.
    const env = { DATABASE_URL: db.url, WORKHORSE_APP: fixtureApp, WORKHORSE_HEARTBEAT_MS: '1000' };
    const tick = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'test', 'fixtures', 'tick-child.ts'), '60000'], {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = tick;
    const exited = new Promise<NodeJS.Signals | null>((resolve) => tick.on('exit', (_code, signal) => resolve(signal)));
    await waitFor(
      async () => (await db.pool.query<{ n: number }>('select count(*)::int as n from workhorse.job_runtime where started')).rows[0]!.n,
      (n) => n === 3,
      { timeoutMs: 30_000, what: 'the child tick to start all 3 jobs' },
    );
    tick.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const summary = await runTick({
      app: fixture,
      connectionString: db.url,
      deadline: new Date(Date.now() + 9_000),
      heartbeatMs: 200,
      untilEmpty: false,
      pollMs: 100,
      scheduleNamespaces: [],
      log: () => undefined,
    });
    expect(summary).toMatchObject({ recovered: 3, claimed: 3, succeeded: 3 });
  }, 60_000);
});

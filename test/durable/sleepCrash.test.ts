// Durable waits (1): a sleep survives SIGKILL. A worker process suspends a
// job on a 2 s sleep and is killed while the job waits; a second process
// picks the job up only after the wake time and is killed while it resumes;
// a third finishes it. The step before the sleep ran once, the step after
// it once, the job succeeded once, and no wake-up counted as an attempt
// (only the killed resumption did: a crash is a failure).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/client/client.js';
import { DURABLE_LOG_TABLE, Sleeper } from '../fixtures/durableJobs.js';
import { killAll, spawnWorker, waitRegistered, type SpawnedWorker } from '../fixtures/spawnWorker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

let db: TestDatabase;
let client: Client;
const procs: SpawnedWorker[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query(DURABLE_LOG_TABLE);
  client = createClient({ connectionString: db.url, jobs: [Sleeper] });
});

afterEach(() => killAll(procs));

afterAll(async () => {
  killAll(procs);
  await client?.close();
  await db?.drop();
});

function start(label: string, mode: 'normal' | 'hangOnResume'): SpawnedWorker {
  const w = spawnWorker({ label, url: db.url, mode, heartbeatMs: 200 } as never, 'durableWorker.ts');
  procs.push(w);
  return w;
}

async function logOf(id: string) {
  return (await db.pool.query<{ what: string; label: string; attempt: number; at: Date }>('select what, label, attempt, at from dx_log where job_id = $1 order by id', [id])).rows;
}

describe('a sleep under SIGKILL', () => {
  it('resumes after the wake time, once, with its steps not re-run', async () => {
    const first = start('sleeper-1', 'normal');
    await waitRegistered(db.pool, ['sleeper-1'], [first]);
    const { id } = await client.enqueue(Sleeper, { sleepMs: 2000 });
    const waiting = await waitFor(() => client.getJob(id), (j) => j?.status === 'waiting', { what: 'the job to suspend', timeoutMs: 30_000 });
    const wakeAt = waiting!.wait!.wakeAt!;
    // Mid-attempt: the attempt it is on (a suspension counts none).
    expect(waiting!.attempt).toBe(1);
    // Killed while the job waits: it holds no lease, so nothing is lost.
    first.child.kill('SIGKILL');
    await first.exited;
    expect((await db.pool.query('select count(*)::int as n from workhorse.job_runtime')).rows[0].n).toBe(0);

    const second = start('sleeper-2', 'hangOnResume');
    await waitRegistered(db.pool, ['sleeper-2'], [second]);
    const resumed = await waitFor(() => logOf(id), (l) => l.some((x) => x.what === 'resumed'), { what: 'the resumption', timeoutMs: 30_000 });
    const resumedAt = resumed.find((x) => x.what === 'resumed')!.at;
    const dbWake = (await db.pool.query<{ wake_at: Date }>('select wake_at from workhorse.job_waits where job_id = $1', [id])).rows[0]!.wake_at;
    expect(dbWake.getTime()).toBe(wakeAt.getTime());
    expect(resumedAt.getTime()).toBeGreaterThanOrEqual(dbWake.getTime());
    // The wake-up was not an attempt: the resumed run is still attempt 1.
    expect(resumed.find((x) => x.what === 'resumed')!.attempt).toBe(1);
    // Killed while it resumes.
    second.child.kill('SIGKILL');
    await second.exited;

    const third = start('sleeper-3', 'normal');
    const done = await waitFor(() => client.getJob(id), (j) => j?.status === 'succeeded', { what: 'the job to finish', timeoutMs: 40_000 });
    expect(done!.result).toEqual({ by: 'sleeper-3' });
    const log = await logOf(id);
    expect(log.map((x) => `${x.what}@${x.label}`)).toEqual(['before@sleeper-1', 'resumed@sleeper-2', 'resumed@sleeper-3', 'finish@sleeper-3']);
    // Attempts count failures: the killed resumption (recovered) is one, no wake-up is.
    expect(done!.attempt).toBe(2);
    const ledger = await db.pool.query('select outcome from workhorse.job_attempts where job_id = $1 order by execution', [id]);
    expect(ledger.rows.map((r) => r.outcome)).toEqual(['recovered', 'succeeded']);
    third.child.kill('SIGTERM');
    await third.exited;
  }, 150_000);
});

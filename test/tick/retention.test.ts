// sys.retention removes only what it should: terminal jobs past the
// retention (with their attempts and steps ledgers) and dead workers; never
// a ready, running or waiting job, nor a recent terminal one, nor a live
// worker. It runs as a recurring slot fired and handled by a tick.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, runRetention, type Client } from '../../src/index.js';
import { retentionHandler } from '../../src/schedules/retention.js';
import { SleepJob } from '../fixtures/tick-app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { backdateSlot, fixtureApp, freshHandler, lambdaContext, scheduledEvent } from './support.js';

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [SleepJob], poolMax: 2 });
});

afterAll(async () => {
  await client.close();
  await db.drop();
});

const DAY_MS = 86_400_000;

/** A job of a type no tick handles, forced into a state and age by SQL. */
async function jobIn(status: string, finishedDaysAgo: number | null, createdDaysAgo = 10): Promise<string> {
  const r = await db.pool.query<{ id: string }>(
    `insert into workhorse.jobs (namespace, queue, type, status, created_at, finished_at)
     values ('default', 'default', 'retention.unhandled', $1,
             now() - make_interval(days => $3), case when $2::int is null then null else now() - make_interval(days => $2::int) end)
     returning id`,
    [status, finishedDaysAgo, createdDaysAgo],
  );
  const id = r.rows[0]!.id;
  await db.pool.query(
    `insert into workhorse.job_attempts (job_id, execution, attempt, namespace, worker_id, outcome)
     values ($1, 1, 1, 'default', 'w', 'failed')`,
    [id],
  );
  await db.pool.query(`insert into workhorse.job_steps (job_id, name, result, execution) values ($1, 's', '1', 1)`, [id]);
  return id;
}

async function worker(id: string, state: string, lastSeenMinutesAgo: number): Promise<void> {
  await db.pool.query(
    `insert into workhorse.worker_registry (namespace, id, heartbeat_ms, state, last_seen)
     values ('default', $1, 1000, $2, now() - make_interval(mins => $3))`,
    [id, state, lastSeenMinutesAgo],
  );
}

async function existing(table: string, column: string, ids: string[]): Promise<string[]> {
  const r = await db.pool.query<{ id: string }>(`select distinct ${column}::text as id from workhorse.${table} where ${column}::text = any($1)`, [ids]);
  return r.rows.map((x) => x.id).sort();
}

describe('sys.retention', () => {
  it('deletes terminal jobs past the retention with their ledgers, and dead workers; nothing else', async () => {
    const oldSucceeded = await jobIn('succeeded', 10);
    const oldFailed = await jobIn('failed', 10);
    const oldCancelled = await jobIn('cancelled', 3);
    const recentSucceeded = await jobIn('succeeded', 0);
    const oldReady = await jobIn('ready', null);
    // A running job is a ready row with a lease (below).
    const oldRunning = await jobIn('ready', null);
    const oldWaiting = await jobIn('waiting', null);
    // The running job is leased by a live worker.
    await worker('live-worker', 'active', 0);
    await db.pool.query(
      `insert into workhorse.job_runtime (job_id, namespace, worker_id, queue, execution, expires_at)
       values ($1, 'default', 'live-worker', 'default', 1, now() + interval '1 hour')`,
      [oldRunning],
    );
    await worker('dead-worker', 'dead', 60);
    await worker('silent-worker', 'active', 60);

    const env = {
      DATABASE_URL: db.url,
      WORKHORSE_APP: fixtureApp,
      WORKHORSE_HEARTBEAT_MS: '500',
      WORKHORSE_RETENTION_MS: String(DAY_MS),
    };
    const handler = await freshHandler(env);
    // The first tick stores the built-in slot (next cadence in an hour).
    const first = await handler(scheduledEvent(), lambdaContext(5000));
    expect(first.slotsFired).toBe(0);
    const slot = await db.pool.query('select schedule_namespace, interval_ms, job from workhorse.schedules where name = $1', ['sys.retention']);
    expect(slot.rows[0]).toMatchObject({ schedule_namespace: 'sys', interval_ms: '3600000' });
    expect(slot.rows[0].job).toMatchObject({ type: 'sys.retention', queue: 'sys', payload: { olderThanMs: DAY_MS } });

    await backdateSlot(db.pool, 'sys.retention', 1);
    const second = await handler(scheduledEvent(), lambdaContext(5000));
    expect(second).toMatchObject({ slotsFired: 1, claimed: 1, succeeded: 1 });

    const run = await db.pool.query<{ status: string; result: unknown }>("select status, result from workhorse.jobs where type = 'sys.retention'");
    // (The tick's own recovery pass may have removed the dead workers first.)
    expect(run.rows).toEqual([{ status: 'succeeded', result: expect.objectContaining({ jobs: 3, batches: 1 }) }]);

    const kept = [recentSucceeded, oldReady, oldRunning, oldWaiting].sort();
    const all = [oldSucceeded, oldFailed, oldCancelled, ...kept];
    expect(await existing('jobs', 'id', all)).toEqual(kept);
    expect(await existing('job_attempts', 'job_id', all)).toEqual(kept);
    expect(await existing('job_steps', 'job_id', all)).toEqual(kept);
    const workers = await db.pool.query<{ id: string }>('select id from workhorse.worker_registry order by id');
    expect(workers.rows).toEqual([{ id: 'live-worker' }]);
    const lease = await db.pool.query('select worker_id from workhorse.job_runtime where job_id = $1', [oldRunning]);
    expect(lease.rows).toEqual([{ worker_id: 'live-worker' }]);
  });

  it('removes workers dead or silent for 7 heartbeats, and no live one', async () => {
    await db.pool.query('delete from workhorse.worker_registry');
    await worker('dead-recently', 'dead', 0);
    // 7 heartbeats of 1 s are long past; recovery would only delete it a minute later.
    await db.pool.query(
      `insert into workhorse.worker_registry (namespace, id, heartbeat_ms, state, last_seen)
       values ('default', 'silent-30s', 1000, 'active', now() - interval '30 seconds'),
              ('default', 'alive', 1000, 'active', now())`,
    );
    const r = await runRetention(client, { olderThanMs: DAY_MS });
    expect(r.workers).toBe(2);
    const left = await db.pool.query<{ id: string }>('select id from workhorse.worker_registry');
    expect(left.rows).toEqual([{ id: 'alive' }]);
  });

  it('works in bounded batches and stops at maxBatches; the next run continues', async () => {
    await db.pool.query("delete from workhorse.jobs where type = 'retention.unhandled'");
    const old = await Promise.all([1, 2, 3, 4, 5].map(() => jobIn('succeeded', 10)));
    const firstRun = await runRetention(client, { olderThanMs: DAY_MS, batchSize: 2, maxBatches: 2 });
    expect(firstRun).toMatchObject({ jobs: 4, batches: 2 });
    expect(await existing('jobs', 'id', old)).toHaveLength(1);
    const secondRun = await runRetention(client, { olderThanMs: DAY_MS, batchSize: 2, maxBatches: 10 });
    expect(secondRun).toMatchObject({ jobs: 1, batches: 1 });
    expect(await existing('jobs', 'id', old)).toEqual([]);
  });

  it('as the sys.retention job, enqueues the next run at once when it stopped at maxBatches with more to delete', async () => {
    // At the defaults a run deletes 100,000 jobs and the slot fires hourly: a fleet finishing more
    // than about 28 jobs a second would never catch up if the rest waited for the next cadence.
    await db.pool.query("delete from workhorse.jobs where type in ('retention.unhandled', 'sys.retention')");
    const old = await Promise.all([1, 2, 3, 4, 5].map(() => jobIn('succeeded', 10)));
    const payload = { olderThanMs: DAY_MS, batchSize: 2, maxBatches: 2 };
    const signal = new AbortController().signal;
    const first = await retentionHandler(client)(payload, { signal });
    expect(first).toMatchObject({ jobs: 4, batches: 2, more: true });
    const next = await client.getJob(first.continued!);
    expect(next).toMatchObject({ type: 'sys.retention', queue: 'sys', status: 'ready', payload });
    expect(next!.runAt.getTime()).toBeLessThanOrEqual(Date.now());
    const second = await retentionHandler(client)(payload, { signal });
    expect(second).toEqual({ jobs: 1, workers: 0, batches: 1, more: false });
    expect(await existing('jobs', 'id', old)).toEqual([]);
  });
});

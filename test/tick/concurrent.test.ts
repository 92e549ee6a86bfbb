// Two ticks at once on one namespace: no job runs twice at the same time (or
// at all), a due slot fires once per cadence whichever tick claims it, and a
// slot missed for 5 cadences fires at most scheduleCatchupLimit times.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, defineSchedule, Schedules, type Client } from '../../src/index.js';
import { NoopJob, runs, SleepJob } from '../fixtures/tick-app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { backdateSlot, fixtureApp, freshHandler, lambdaContext, scheduledEvent } from './support.js';

let db: TestDatabase;
let client: Client;
let schedules: Schedules;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [SleepJob, NoopJob], poolMax: 2 });
  schedules = new Schedules(client);
});

afterAll(async () => {
  await client.close();
  await db.drop();
});

const CATCHUP_LIMIT = 3;
const env = () => ({
  DATABASE_URL: db.url,
  WORKHORSE_APP: fixtureApp,
  WORKHORSE_HEARTBEAT_MS: '500',
  WORKHORSE_CONCURRENCY: '4',
  WORKHORSE_SCHEDULE_CATCHUP_LIMIT: String(CATCHUP_LIMIT),
});

async function slotJobs(name: string): Promise<string[]> {
  const r = await db.pool.query<{ dedupe_key: string }>(
    "select dedupe_key from workhorse.jobs where dedupe_key like 'slot:' || $1 || ':%' order by dedupe_key",
    [name],
  );
  return r.rows.map((x) => x.dedupe_key);
}

describe('two ticks at once on one namespace', () => {
  it('never run the same job concurrently, and each job runs exactly once', async () => {
    const jobs = await client.enqueueMany(Array.from({ length: 40 }, () => ({ job: SleepJob, payload: { ms: 30 }, options: { timeoutMs: 1000 } })));
    const handler = await freshHandler(env());
    // The fixture app, loaded by the handler, is this test's module instance.
    runs.started.length = 0;
    const [a, b] = await Promise.all([handler(scheduledEvent(), lambdaContext(6000)), handler(scheduledEvent(), lambdaContext(6000))]);

    expect(runs.overlaps).toEqual([]);
    expect(a.claimed + b.claimed).toBe(40);
    expect(a.succeeded + b.succeeded).toBe(40);
    expect(new Set(runs.started).size).toBe(40);
    expect(runs.started).toHaveLength(40);
    const ledger = await db.pool.query<{ job_id: string; n: number }>(
      'select job_id, count(*)::int as n from workhorse.job_attempts group by job_id having count(*) <> 1',
    );
    expect(ledger.rows).toEqual([]);
    for (const { id } of jobs) expect((await client.getJob(id))?.status).toBe('succeeded');
  });

  it('fire each due slot exactly once, whichever claims it', async () => {
    await schedules.define(defineSchedule({ name: 'test.hourly', job: NoopJob, everyMs: 3_600_000 }));
    const handler = await freshHandler(env());
    let fired = 0;
    for (let round = 1; round <= 5; round++) {
      // One cadence due (30 s ago): both ticks start together and race for it.
      await backdateSlot(db.pool, 'test.hourly', 30);
      const [a, b] = await Promise.all([handler(scheduledEvent(), lambdaContext(5000)), handler(scheduledEvent(), lambdaContext(5000))]);
      fired += a.slotsFired + b.slotsFired;
      expect(await slotJobs('test.hourly')).toHaveLength(round);
    }
    expect(fired).toBe(5);
    const slot = await schedules.get('test.hourly');
    expect(slot.nextRunAt.getTime()).toBeGreaterThan(Date.now());
  });
});

describe('a slot missed for 5 cadences', () => {
  it(`fires at most scheduleCatchupLimit (${CATCHUP_LIMIT}) times: the most recent cadences`, async () => {
    await schedules.define(defineSchedule({ name: 'test.minutely', job: NoopJob, everyMs: 60_000 }));
    // Due at -270 s, -210 s, -150 s, -90 s and -30 s.
    await backdateSlot(db.pool, 'test.minutely', 270);
    const before = await schedules.get('test.minutely');
    const handler = await freshHandler(env());
    const [a, b] = await Promise.all([handler(scheduledEvent(), lambdaContext(5000)), handler(scheduledEvent(), lambdaContext(5000))]);

    expect(a.slotsFired + b.slotsFired).toBe(CATCHUP_LIMIT);
    const keys = await slotJobs('test.minutely');
    const start = before.nextRunAt.getTime();
    expect(keys).toEqual([2, 3, 4].map((k) => `slot:test.minutely:${new Date(start + k * 60_000).toISOString()}`));
    const after = await schedules.get('test.minutely');
    expect(after.nextRunAt.getTime()).toBe(start + 5 * 60_000);
    // The fired jobs ran in the same ticks.
    const statuses = await db.pool.query<{ status: string }>(
      "select distinct status from workhorse.jobs where dedupe_key like 'slot:test.minutely:%'",
    );
    expect(statuses.rows).toEqual([{ status: 'succeeded' }]);
  });

  it('fires at most scheduleCatchupLimit times for a cron slot too', async () => {
    await schedules.define(defineSchedule({ name: 'test.cron', job: NoopJob, cron: '* * * * *' }));
    await backdateSlot(db.pool, 'test.cron', 0);
    // Back to a whole minute at least 5 minutes ago.
    await db.pool.query(
      "update workhorse.schedules set next_run_at = date_trunc('minute', now()) - interval '5 minutes' where name = 'test.cron'",
    );
    const handler = await freshHandler(env());
    const summary = await handler(scheduledEvent(), lambdaContext(5000));
    expect(summary.slotsFired).toBe(CATCHUP_LIMIT);
    const keys = await slotJobs('test.cron');
    expect(keys).toHaveLength(CATCHUP_LIMIT);
    // The latest cadences: consecutive minutes ending at the current one.
    const times = keys.map((k) => new Date(k.slice('slot:test.cron:'.length)).getTime());
    expect(times[1]! - times[0]!).toBe(60_000);
    expect(times[2]! - times[1]!).toBe(60_000);
    const slot = await schedules.get('test.cron');
    expect(slot.nextRunAt.getTime()).toBe(times[2]! + 60_000);
  });
});

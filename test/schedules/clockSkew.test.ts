// A cron slot's first run comes from the database's clock, not the storing
// machine's: a worker whose clock ran an hour ahead stored a new
// `*/3 * * * * *` slot an hour in the future, and it did not fire for that
// hour (a correctly clocked peer storing the same definition does not
// rewrite the row). Schedules.define() and enable() read the database's
// clock first. Here this process's Date runs an hour ahead.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createClient, defineSchedule, Schedules, type Client } from '../../src/index.js';
import { NoopJob } from '../fixtures/tick-app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let db: TestDatabase;
let client: Client;
let schedules: Schedules;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [NoopJob], poolMax: 2 });
  schedules = new Schedules(client);
});

afterEach(() => {
  vi.useRealTimers();
});

afterAll(async () => {
  await client.close();
  await db.drop();
});

async function dbNow(): Promise<number> {
  return (await db.pool.query<{ now: Date }>('select now() as now')).rows[0]!.now.getTime();
}

describe('a cron slot stored by a machine whose clock runs an hour ahead', () => {
  it('is due at its first cadence after the database clock, by define() and by enable()', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 3_600_000);
    const [stored] = await schedules.define(defineSchedule({ name: 'skew.cron', job: NoopJob, cron: '*/3 * * * * *' }));
    let now = await dbNow();
    expect(stored!.nextRunAt!.getTime() - now).toBeLessThanOrEqual(3_000);
    expect(stored!.nextRunAt!.getTime()).toBeGreaterThan(now - 1_000);

    await schedules.disable('skew.cron');
    const enabled = await schedules.enable('skew.cron');
    now = await dbNow();
    expect(enabled.nextRunAt!.getTime() - now).toBeLessThanOrEqual(3_000);
  });
});

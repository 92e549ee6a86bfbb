// A long-lived worker that fires the `sys` slots stores sys.retention with
// its own retentionMs and retentionEveryMs (the tick's option names and
// defaults), so a worker deployment can keep jobs longer than 7 days and
// starting one does not shorten the retention a tick was configured with.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, Worker, type Client } from '../../src/index.js';
import { ConfigError } from '../../src/errors.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const DAY_MS = 86_400_000;

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, poolMax: 4 });
});

afterAll(async () => {
  await client.close();
  await db.drop();
});

async function finishedJob(daysAgo: number): Promise<string> {
  const r = await db.pool.query<{ id: string }>(
    `insert into workhorse.jobs (namespace, queue, type, status, created_at, finished_at)
     values ('default', 'default', 'retention.kept', 'succeeded', now() - make_interval(days => $1 + 1), now() - make_interval(days => $1))
     returning id`,
    [daysAgo],
  );
  return r.rows[0]!.id;
}

const storedSlot = async () =>
  (await db.pool.query<{ interval_ms: string; job: { payload: { olderThanMs: number } } }>(
    "select interval_ms, job from workhorse.schedules where name = 'sys.retention'",
  )).rows[0];

describe('sys.retention on a long-lived worker', () => {
  it('stores and runs the retention the worker was given', async () => {
    const tenDaysOld = await finishedJob(10);
    const fortyDaysOld = await finishedJob(40);
    const worker = new Worker(client, {
      queues: ['default'],
      scheduleNamespaces: ['sys'],
      retentionMs: 30 * DAY_MS,
      retentionEveryMs: 2 * 3_600_000,
      pollMs: 50,
      heartbeatMs: 500,
    });
    const running = worker.run();
    try {
      await waitFor(storedSlot, (s) => s !== undefined, { what: 'sys.retention to be stored' });
      const slot = await storedSlot();
      expect(slot!.interval_ms).toBe('7200000');
      expect(slot!.job.payload.olderThanMs).toBe(30 * DAY_MS);

      await db.pool.query("update workhorse.schedules set next_run_at = date_trunc('milliseconds', now() - interval '1 second') where name = 'sys.retention'");
      await waitFor(
        () => db.pool.query<{ status: string }>("select status from workhorse.jobs where type = 'sys.retention'"),
        (r) => r.rows[0]?.status === 'succeeded',
        { what: 'the sys.retention job to run' },
      );
      const left = await db.pool.query<{ id: string }>("select id::text as id from workhorse.jobs where type = 'retention.kept'");
      expect(left.rows.map((r) => r.id)).toEqual([tenDaysOld]);
      expect(left.rows.map((r) => r.id)).not.toContain(fortyDaysOld);
    } finally {
      await worker.stop();
      await running;
    }
  });

  it('keeps the defaults without the options (7 days, hourly)', async () => {
    await db.pool.query("delete from workhorse.schedules where name = 'sys.retention'");
    const worker = new Worker(client, { queues: ['default'], scheduleNamespaces: ['sys'], pollMs: 50, heartbeatMs: 500 });
    const running = worker.run();
    try {
      await waitFor(storedSlot, (s) => s !== undefined, { what: 'sys.retention to be stored' });
      const slot = await storedSlot();
      expect(slot!.interval_ms).toBe('3600000');
      expect(slot!.job.payload.olderThanMs).toBe(7 * DAY_MS);
    } finally {
      await worker.stop();
      await running;
    }
  });

  it('refuses the options without the sys schedule namespace, and out of range', () => {
    expect(() => new Worker(client, { retentionMs: 30 * DAY_MS })).toThrow(ConfigError);
    expect(() => new Worker(client, { retentionMs: 30 * DAY_MS })).toThrow(/add "sys" to scheduleNamespaces/);
    expect(() => new Worker(client, { scheduleNamespaces: ['sys'], retentionEveryMs: 10 })).toThrow(/retentionEveryMs/);
  });
});

// A long-lived worker opts into recurring slots with scheduleNamespaces; one
// that does not never fires them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, defineSchedule, Schedules, Worker, type Client } from '../../src/index.js';
import { NoopJob } from '../fixtures/tick-app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { sleep, waitFor } from '../helpers/wait.js';
import { backdateSlot } from '../tick/support.js';

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [NoopJob], poolMax: 4 });
  await new Schedules(client).define(defineSchedule({ name: 'worker.every-minute', job: NoopJob, everyMs: 60_000 }));
  await backdateSlot(db.pool, 'worker.every-minute', 1);
});

afterAll(async () => {
  await client.close();
  await db.drop();
});

const noopJobs = async () =>
  (await db.pool.query<{ n: number }>(`select count(*)::int as n from workhorse.jobs where type = $1`, [NoopJob.type])).rows[0]!.n;

describe('worker scheduleNamespaces', () => {
  it('a worker without scheduleNamespaces leaves a due slot alone', async () => {
    const w = new Worker(client, { pollMs: 100, heartbeatMs: 1000 }).handle(NoopJob, () => null);
    const run = w.run();
    await sleep(1500);
    await w.stop();
    await run;
    expect(await noopJobs()).toBe(0);
  });

  it('a worker with scheduleNamespaces fires the due slot once and runs the job it enqueued', async () => {
    const w = new Worker(client, { pollMs: 100, heartbeatMs: 1000, scheduleNamespaces: ['default'] }).handle(NoopJob, () => null);
    const run = w.run();
    const done = await waitFor(
      async () => (await db.pool.query<{ status: string }>(`select status from workhorse.jobs where type = $1`, [NoopJob.type])).rows,
      (rows) => rows.length > 0 && rows.every((r) => r.status === 'succeeded'),
      { what: 'the slot job to succeed' },
    );
    await w.stop();
    await run;
    expect(done).toHaveLength(1);
    const slot = await new Schedules(client).get('worker.every-minute');
    expect(slot.nextRunAt.getTime()).toBeGreaterThan(Date.now());
  });
});

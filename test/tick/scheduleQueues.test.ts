// A tick of an app claims the queues its schedules enqueue into: a slot
// whose job is sent to a queue of its own (options.queue) is fired and run
// by the same tick, not left ready on a queue no tick of the app serves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineApp, defineJob, defineSchedule, runTick, Schedules, type Client } from '../../src/index.js';
import { appQueues } from '../../src/app/appQueues.js';
import { unservedQueuesWarning } from '../../src/cli/unservedQueues.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { backdateSlot } from './support.js';

const Report = defineJob({ type: 'queues.report', schema: z.object({ scope: z.string() }) });
const ran: string[] = [];
const nightly = defineSchedule({ name: 'queues.nightly', job: Report, payload: { scope: 'all' }, everyMs: 60_000, options: { queue: 'reports' } });
const app = defineApp({
  jobs: [Report],
  schedules: [nightly],
  configure(worker) {
    worker.handle(Report, async ({ scope }) => {
      ran.push(scope);
    });
  },
});

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Report], poolMax: 2 });
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

describe("an app's schedule on a queue of its own", () => {
  it('counts the queue among the queues the app serves', () => {
    expect(appQueues(app, false).sort()).toEqual(['default', 'reports']);
    expect(appQueues(app, true).sort()).toEqual(['default', 'reports', 'sys']);
  });

  it('is no unserved queue for `workhorse tick --queue`', () => {
    expect(unservedQueuesWarning(['reports'], app)).toBeUndefined();
    expect(unservedQueuesWarning(['nope'], app)).toMatch(/queue "nope" holds no job type of this app, .*"default", "reports", "sys"/);
  });

  it('is fired and run by one tick of the app', async () => {
    await new Schedules(client).define(nightly);
    await backdateSlot(db.pool, 'queues.nightly', 30);
    const summary = await runTick({ app, connectionString: db.url, deadline: new Date(Date.now() + 20_000), heartbeatMs: 1_000 });
    expect(summary.slotsFired).toBe(1);
    expect(summary.succeeded).toBe(1);
    expect(ran).toEqual(['all']);
    const jobs = await db.pool.query("select queue, status from workhorse.jobs where dedupe_key like 'slot:queues.nightly:%'");
    expect(jobs.rows).toEqual([{ queue: 'reports', status: 'succeeded' }]);
  });
});

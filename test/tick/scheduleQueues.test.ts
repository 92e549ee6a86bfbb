// A tick of an app claims the queues its schedules enqueue into: a slot
// whose job is sent to a queue of its own (options.queue) is fired and run
// by the same tick, not left ready on a queue no tick of the app serves.
// And it fires its app's schedules whatever their schedule namespace: given
// no namespaces it fires `default`, `sys` and every namespace its app's
// schedules are in (it used to fire `default` and `sys` only, so the
// documented `scheduleNamespace: 'reports'` slot was stored, declared and
// never fired by any tick, and the CDK stack sets no namespaces); given
// namespaces explicitly (a fleet split between ticks), only those.
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

const NsReport = defineJob({ type: 'ns.report', schema: z.object({ scope: z.string() }) });
const nsRan: string[] = [];
const nsNightly = defineSchedule({ name: 'ns.nightly', job: NsReport, payload: { scope: 'all' }, everyMs: 60_000, scheduleNamespace: 'reports' });
const nsApp = defineApp({
  jobs: [NsReport],
  schedules: [nsNightly],
  configure(worker) {
    worker.handle(NsReport, async ({ scope }) => {
      nsRan.push(scope);
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
    expect(unservedQueuesWarning(['nope'], app)).toMatch(/queue "nope" is the queue of no job type of this app: .*"default", "reports", "sys"/);
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

describe("an app's schedule in a namespace of its own", () => {
  const tick = (scheduleNamespaces?: string[]) =>
    runTick({ app: nsApp, connectionString: db.url, deadline: new Date(Date.now() + 20_000), heartbeatMs: 1_000, ...(scheduleNamespaces ? { scheduleNamespaces } : {}) });

  it('is fired by a tick of the app given no namespaces', async () => {
    expect((await tick()).slotsFired).toBe(0); // stores it; its first cadence is a minute away
    await backdateSlot(db.pool, 'ns.nightly', 30);
    const summary = await tick();
    expect(summary).toMatchObject({ slotsFired: 1, succeeded: 1 });
    expect(nsRan).toEqual(['all']);
  });

  it('is left to the ticks that name its namespace when namespaces are given', async () => {
    await backdateSlot(db.pool, 'ns.nightly', 30);
    expect((await tick(['default', 'sys'])).slotsFired).toBe(0);
    expect((await tick(['reports'])).slotsFired).toBe(1);
    expect(nsRan).toEqual(['all', 'all']);
  });
});

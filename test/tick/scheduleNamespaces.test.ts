// A tick fires its app's schedules whatever their schedule namespace. Given
// no namespaces it fires `default`, `sys` and every namespace its app's
// schedules are in: it used to fire `default` and `sys` only, so the
// documented `scheduleNamespace: 'reports'` slot was stored, declared, and
// never fired by any tick (and the CDK stack sets no namespaces). Given
// namespaces explicitly (a fleet split between ticks), it fires only those.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineApp, defineJob, defineSchedule, runTick, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { backdateSlot } from './support.js';

const Report = defineJob({ type: 'ns.report', schema: z.object({ scope: z.string() }) });
const ran: string[] = [];
const nightly = defineSchedule({ name: 'ns.nightly', job: Report, payload: { scope: 'all' }, everyMs: 60_000, scheduleNamespace: 'reports' });
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

const tick = (scheduleNamespaces?: string[]) =>
  runTick({ app, connectionString: db.url, deadline: new Date(Date.now() + 20_000), heartbeatMs: 1_000, ...(scheduleNamespaces ? { scheduleNamespaces } : {}) });

describe("an app's schedule in a namespace of its own", () => {
  it('is fired by a tick of the app given no namespaces', async () => {
    expect((await tick()).slotsFired).toBe(0); // stores it; its first cadence is a minute away
    await backdateSlot(db.pool, 'ns.nightly', 30);
    const summary = await tick();
    expect(summary).toMatchObject({ slotsFired: 1, succeeded: 1 });
    expect(ran).toEqual(['all']);
  });

  it('is left to the ticks that name its namespace when namespaces are given', async () => {
    await backdateSlot(db.pool, 'ns.nightly', 30);
    expect((await tick(['default', 'sys'])).slotsFired).toBe(0);
    expect((await tick(['reports'])).slotsFired).toBe(1);
    expect(ran).toEqual(['all', 'all']);
  });
});

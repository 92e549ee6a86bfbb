// A built-in slot whose last job has not started yet enqueues no other: with
// the sys queue paused, each sys.alerts and sys.outbox cadence queued one
// more job (1,440 a day at the default cadence), and all of them ran back
// to back once it was resumed. The slot still moves on each cadence, and an
// app's own slots keep one job per cadence. Its last firing stays that of
// the job it holds: it moved on each cadence as if a job had been enqueued.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, defineSchedule, ScheduleRunner, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';
import { backdateSlot } from '../tick/support.js';

const Report = defineJob({ type: 'pileup.report', schema: z.object({}) });
let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Report] });
});
afterAll(async () => {
  await client?.close();
  await db?.drop();
});

const readyOf = async (type: string) =>
  (await db.pool.query<{ n: number }>("select count(*)::int n from workhorse.jobs where type = $1 and status = 'ready'", [type])).rows[0]!.n;
const lastFired = async (name: string) =>
  (await db.pool.query<{ at: Date | null; cadence: Date | null }>('select last_fired_at at, last_cadence cadence from workhorse.schedules where name = $1', [name])).rows[0]!;
const movedOn = async (name: string) =>
  (await db.pool.query<{ ahead: boolean }>('select next_run_at > now() ahead from workhorse.schedules where name = $1', [name])).rows[0]!.ahead;
/** What one cadence left: whether the retention slot moved on, and the ready jobs of both slots. */
const cadenceState = async () => ({
  retentionMovedOn: await movedOn('sys.retention'),
  retentionReady: await readyOf('sys.retention'),
  reportReady: await readyOf('pileup.report'),
});

it('keeps one sys.retention job waiting while sys is paused, however many cadences pass; an app slot gets one per cadence', async () => {
  await client.admin.pauseQueue('sys');
  const report = defineSchedule({ name: 'pileup.hourly', job: Report, everyMs: 3_600_000 });
  const runner = new ScheduleRunner(client, { scheduleNamespaces: ['sys', 'default'], schedules: [report], intervalMs: 3_600_000 });
  await runner.start();
  try {
    let firstFiring: { at: Date | null; cadence: Date | null } | undefined;
    for (let i = 1; i <= 3; i++) {
      await backdateSlot(db.pool, 'sys.retention', 5);
      await backdateSlot(db.pool, 'pileup.hourly', 5);
      await runner.runOnce();
      // The slot moved on, whether or not it enqueued. The runner's own first
      // pass (started by start()) may be the one that fires the first cadence,
      // so the state is awaited, not read once; a second fire of one cadence
      // would still show as one job too many.
      const want = { retentionMovedOn: true, retentionReady: 1, reportReady: i };
      const seen = await waitFor(cadenceState, (s) => s.retentionMovedOn && s.reportReady >= i, { what: `cadence ${i} to fire` });
      expect(seen).toEqual(want);
      if (i === 1) firstFiring = await lastFired('sys.retention');
      else expect(await lastFired('sys.retention'), `cadence ${i}: held, not fired`).toEqual(firstFiring);
    }
    // Resumed, the system worker runs the one job, and the next cadence enqueues again.
    await client.admin.resumeQueue('sys');
    await waitFor(() => readyOf('sys.retention'), (n) => n === 0, { what: 'the held sys.retention job to run', timeoutMs: 20_000 });
    await backdateSlot(db.pool, 'sys.retention', 5);
    await runner.runOnce();
    expect(await db.pool.query("select 1 from workhorse.jobs where type = 'sys.retention'").then((r) => r.rowCount)).toBe(2);
  } finally {
    await runner.stop();
  }
});

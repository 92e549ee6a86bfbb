// The Alerts view says whether anything evaluates the rules: with no
// sys.alerts slot, with the slot disabled, or with the slot overdue by more
// than three cadences (nothing fires it any more), the page used to say
// "No alert is open" as if the fleet were healthy. Once a worker fires the
// slot, it says when the rules last ran.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Schedules } from '../../src/schedules/schedules.js';
import { loadAlerts } from '../../src/http/ui/data/alertsData.js';
import { alertsView } from '../../src/http/ui/views/alertsView.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';
import { startDashboard, type Dashboard } from './support/dashboard.js';

let db: TestDatabase;
let d: Dashboard;

beforeAll(async () => {
  db = await createTestDatabase();
  d = await startDashboard(db);
});

afterAll(async () => {
  await d?.close();
  await db?.drop();
});

const evaluation = async () => (await loadAlerts(d.client, {}, Date.now())).evaluation;
const rendered = async () => String(alertsView(await loadAlerts(d.client, {}, Date.now())).live);

describe('whether the alert rules are evaluated', () => {
  it('none, then last evaluated, overdue and disabled, each said on the page', async () => {
    expect(await evaluation()).toEqual({ state: 'none' });
    expect(await rendered()).toContain('Nothing evaluates the alert rules in this namespace');

    const worker = new Worker(d.client, { queues: ['default'], scheduleNamespaces: ['sys'], alerts: { everyMs: 1000 }, pollMs: 100 });
    const run = worker.run();
    try {
      await waitFor(evaluation, (e) => e.state === 'ok' && e.ranAt !== null, { what: 'sys.alerts to fire and its job to run', timeoutMs: 20_000 });
    } finally {
      await worker.stop();
      await run;
    }
    expect(await rendered()).toMatch(/id="alerts-evaluated">Rules last evaluated <time datetime="\d{4}-\d\d-\d\dT/);

    // A few cadences late is within the pace a worker or a tick fires a short cadence at: not overdue.
    await db.pool.query("update workhorse.schedules set last_fired_at = now() - interval '10 seconds' where name = 'sys.alerts'");
    expect(await evaluation()).toMatchObject({ state: 'ok' });
    // Nothing has fired it for more than three cadences and three minutes.
    await db.pool.query("update workhorse.schedules set last_fired_at = now() - interval '10 minutes' where name = 'sys.alerts'");
    expect(await evaluation()).toMatchObject({ state: 'overdue', everyMs: 1000 });
    expect(await rendered()).toMatch(/The rules have not been evaluated since .*, more than three of the <code>sys\.alerts<\/code> cadences and three minutes/);

    await new Schedules(d.client).disable('sys.alerts');
    expect(await evaluation()).toEqual({ state: 'disabled' });
    expect(await rendered()).toContain('The <code>sys.alerts</code> slot is disabled');
  }, 60_000);

  it('stalled: the slot fires, but its jobs sit unrun (the sys queue paused): said, not "last evaluated" at the last firing', async () => {
    await new Schedules(d.client).enable('sys.alerts');
    await d.client.admin.pauseQueue('sys');
    const worker = new Worker(d.client, { queues: ['default'], scheduleNamespaces: ['sys'], alerts: { everyMs: 1000 }, pollMs: 100 });
    const run = worker.run();
    try {
      // It keeps firing; its one job waits on the paused queue (a built-in slot enqueues no other meanwhile).
      await waitFor(
        async () => (await db.pool.query<{ n: number }>("select count(*)::int n from workhorse.jobs where type = 'sys.alerts' and status = 'ready'")).rows[0]!.n,
        (n) => n >= 1,
        { what: 'a sys.alerts job to wait', timeoutMs: 20_000 },
      );
      // Its oldest job due for longer than three cadences and three minutes (the time moved back rather than waited for).
      await db.pool.query(
        "update workhorse.jobs set run_at = now() - interval '10 minutes' where id = (select min(id) from workhorse.jobs where type = 'sys.alerts' and status = 'ready')",
      );
      const e = await evaluation();
      expect(e).toMatchObject({ state: 'stalled' });
      expect(await rendered()).toMatch(/The rules have not been evaluated since .*: the <code>sys\.alerts<\/code> job due then, <a href="\/ui\/jobs\/\d+">#\d+<\/a>, has not run/);
      // Resumed: the job runs, and the page says when the rules last ran.
      await d.client.admin.resumeQueue('sys');
      await waitFor(evaluation, (x) => x.state === 'ok' && x.ranAt !== null, { what: 'the rules to run again', timeoutMs: 20_000 });
    } finally {
      await worker.stop();
      await run;
    }
  }, 60_000);
});

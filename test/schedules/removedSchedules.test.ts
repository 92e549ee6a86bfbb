// A schedule removed from the app stops firing. Slots an app stores at a
// tick's (or a ScheduleRunner's) start are `declared`, and fire only from
// firers whose build still declares them: a build without the schedule
// leaves it alone, while an older build still ticking in a rolling deploy
// fires it. Before, the row kept firing from every tick for ever. A slot
// stored by `schedules.define()` is not declared and fires from any firer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineApp, defineJob, defineSchedule, runTick, ScheduleRunner, Schedules, type Client } from '../../src/index.js';
import { evaluateAlerts } from '../../src/db/protocol.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';
import { backdateSlot } from '../tick/support.js';

const Report = defineJob({ type: 'removed.report', schema: z.object({ which: z.string() }) });
const keep = defineSchedule({ name: 'removed.keep', job: Report, payload: { which: 'keep' }, everyMs: 60_000 });
const drop = defineSchedule({ name: 'removed.drop', job: Report, payload: { which: 'drop' }, everyMs: 60_000 });
const adhoc = defineSchedule({ name: 'removed.adhoc', job: Report, payload: { which: 'adhoc' }, everyMs: 60_000 });

const ran: string[] = [];
function app(schedules: (typeof keep)[]) {
  return defineApp({
    jobs: [Report],
    schedules,
    configure(worker) {
      worker.handle(Report, async ({ which }) => {
        ran.push(which);
      });
    },
  });
}
const build1 = app([keep, drop]);
const build2 = app([keep]);

let db: TestDatabase;
let client: Client;
let schedules: Schedules;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Report], poolMax: 2 });
  schedules = new Schedules(client);
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

async function tick(build: ReturnType<typeof app>): Promise<string[]> {
  ran.length = 0;
  await runTick({ app: build, connectionString: db.url, deadline: new Date(Date.now() + 20_000), heartbeatMs: 1_000, scheduleNamespaces: ['default'] });
  return [...ran].sort();
}

async function backdateAll(): Promise<void> {
  for (const name of ['removed.keep', 'removed.drop', 'removed.adhoc']) await backdateSlot(db.pool, name, 90);
}

async function declared(): Promise<Record<string, boolean>> {
  return Object.fromEntries((await schedules.list()).map((s) => [s.name, s.declared]));
}

describe('a schedule removed from the app', () => {
  it('is declared by the build that stores it, and fires from it', async () => {
    await tick(build1);
    expect(await declared()).toEqual({ 'removed.drop': true, 'removed.keep': true });
    await backdateAll();
    expect(await tick(build1)).toEqual(['drop', 'keep']);
  });

  it('no longer fires from a build without it; its row stays, inert', async () => {
    await backdateAll();
    expect(await tick(build2)).toEqual(['keep']);
    const row = (await schedules.list()).find((s) => s.name === 'removed.drop')!;
    expect(row).toMatchObject({ declared: true, enabled: true });
    expect(row.nextRunAt.getTime()).toBeLessThan(Date.now());
    // The slot_missed alert names it, as a declared slot no build fires.
    const missed = await evaluateAlerts(db.pool, 'default', { slot_missed: { cadences: 1, cronGraceMs: 900_000 } });
    expect(missed).toContainEqual(expect.objectContaining({ rule: 'slot_missed', key: 'removed.drop', details: expect.objectContaining({ declared: true }) }));
  });

  it('still fires from an older build ticking beside the new one (a rolling deploy)', async () => {
    expect(await tick(build1)).toEqual(['drop']);
  });

  it('fires from any build once stored by schedules.define(), which does not declare it', async () => {
    await schedules.define([drop, adhoc]);
    expect(await declared()).toEqual({ 'removed.adhoc': false, 'removed.drop': false, 'removed.keep': true });
    await backdateAll();
    expect(await tick(build2)).toEqual(['adhoc', 'drop', 'keep']);
  });
});

describe('a ScheduleRunner', () => {
  it('fires the slots it declares and undeclared ones, never slots only another build declares', async () => {
    await tick(build1); // declares removed.drop again
    const other = new ScheduleRunner(client, { scheduleNamespaces: ['default'], schedules: [keep] });
    await other.start();
    try {
      await db.pool.query('delete from workhorse.jobs');
      await backdateAll();
      await other.runOnce();
      // The runner's own first pass (start() schedules it at once) may hold the slots it leased while
      // this one finds them taken: wait until the fired jobs are written, whichever pass wrote them.
      const fired = await waitFor(
        async () =>
          (
            await db.pool.query<{ name: string }>(
              `select split_part(dedupe_key, ':', 2) as name from workhorse.jobs where dedupe_key like 'slot:%' order by 1`,
            )
          ).rows.map((r) => r.name),
        (names) => names.length >= 2,
        { what: 'the due slots fired', timeoutMs: 10_000 },
      );
      expect(fired).toEqual(['removed.adhoc', 'removed.keep']);
    } finally {
      await other.stop();
    }
  });
});

// A schedule disabled while a claimer holds its slot is not fired: the fire
// statement re-checks `enabled` on the row it locks. The race is driven on
// two connections in a fixed order: the disable holds the row lock in an
// open transaction, the fire statement is seen waiting on that lock, then
// the disable commits and the fire goes on against the committed row.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, defineSchedule, Schedules, type Client } from '../../src/index.js';
import { claimSlots, fireSlots } from '../../src/db/protocol.js';
import { dueCadences } from '../../src/schedules/cadence.js';
import { NoopJob } from '../fixtures/tick-app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';
import { backdateSlot } from '../tick/support.js';

let db: TestDatabase;
let client: Client;
let schedules: Schedules;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [NoopJob], poolMax: 2 });
  schedules = new Schedules(client);
});

afterAll(async () => {
  await client.close();
  await db.drop();
});

/** Claims the named due slot and returns the fire its claimer would send. */
async function claimFire(name: string) {
  const claim = await claimSlots(db.pool, 'default', 'racer', ['default'], null, 10, 30_000);
  const slot = claim.slots.find((s) => s.name === name)!;
  const d = dueCadences(slot, slot.nextRunAt, claim.dbNow!, 1);
  return { name, expected: slot.nextRunAt, nextRunAt: d.next, cadences: d.due.map((x) => x.toISOString()) };
}

const firedJobs = async (name: string) =>
  (await db.pool.query('select id from workhorse.jobs where dedupe_key like $1', [`slot:${name}:%`])).rowCount;

describe('disabling a schedule while a tick fires it', () => {
  it('fires nothing when the disable commits while the fire waits on the row', async () => {
    await schedules.define(defineSchedule({ name: 'race.disable', job: NoopJob, everyMs: 60_000 }));
    await backdateSlot(db.pool, 'race.disable', 90);
    const fire = await claimFire('race.disable');
    expect(fire.cadences).toHaveLength(1);

    const disabler = new pg.Client({ connectionString: db.url });
    const firer = new pg.Client({ connectionString: db.url });
    await disabler.connect();
    await firer.connect();
    try {
      await disabler.query('begin');
      await disabler.query("select workhorse.set_schedule_enabled_v1('default', 'race.disable', false)");
      const firerPid = (await firer.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      const fired = fireSlots(firer, 'default', [fire]);
      // The fire statement is blocked on the disabler's row lock.
      await waitFor(
        async () => (await db.pool.query('select wait_event_type from pg_stat_activity where pid = $1', [firerPid])).rows[0]?.wait_event_type,
        (w) => w === 'Lock',
        { what: 'the fire statement to wait on the schedule row lock' },
      );
      await disabler.query('commit');
      expect(await fired).toEqual([]);
    } finally {
      await disabler.end();
      await firer.end();
    }
    expect(await firedJobs('race.disable')).toBe(0);
    const row = (await db.pool.query('select enabled, next_run_at from workhorse.schedules where name = $1', ['race.disable'])).rows[0];
    expect(row.enabled).toBe(false);
    expect(row.next_run_at).toEqual(fire.expected);
  });

  it('fires nothing when the disable committed between the claim and the fire', async () => {
    await schedules.define(defineSchedule({ name: 'race.between', job: NoopJob, everyMs: 60_000 }));
    await backdateSlot(db.pool, 'race.between', 90);
    const fire = await claimFire('race.between');
    await schedules.disable('race.between');
    expect(await fireSlots(db.pool, 'default', [fire])).toEqual([]);
    expect(await firedJobs('race.between')).toBe(0);
  });
});

// Recurring slots: the schedules API (define, list, get, enable, disable,
// delete), the cadence math, the fence that keeps a late claimer from firing
// an old catch-up window, and the long-lived schedule runner.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  ConfigError,
  createClient,
  defineJob,
  defineSchedule,
  NotFoundError,
  ScheduleRunner,
  Schedules,
  UnknownJobTypeError,
  type Client,
} from '../../src/index.js';
import { claimSlots, fireSlots } from '../../src/db/protocol.js';
import { dueCadences, firstRunAfter } from '../../src/schedules/cadence.js';
import { NoopJob, SleepJob } from '../fixtures/tick-app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';
import { backdateSlot } from './support.js';

let db: TestDatabase;
let client: Client;
let schedules: Schedules;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [SleepJob, NoopJob], poolMax: 3 });
  schedules = new Schedules(client);
});

afterAll(async () => {
  await client.close();
  await db.drop();
});

const at = (iso: string) => new Date(iso);

describe('cadence math', () => {
  it('fires the latest `limit` interval cadences and moves on to the next one after now', () => {
    const r = dueCadences({ cron: null, timezone: null, intervalMs: 60_000 }, at('2030-01-01T10:00:00Z'), at('2030-01-01T10:04:30Z'), 2);
    expect(r.due.map((d) => d.toISOString())).toEqual(['2030-01-01T10:03:00.000Z', '2030-01-01T10:04:00.000Z']);
    expect(r.next.toISOString()).toBe('2030-01-01T10:05:00.000Z');
  });

  it('fires the latest `limit` cron cadences, in the schedule’s time zone', () => {
    const spec = { cron: '0 3 * * *', timezone: 'Europe/Paris', intervalMs: null };
    const first = firstRunAfter(spec, at('2030-01-01T00:00:00Z'));
    expect(first.toISOString()).toBe('2030-01-01T02:00:00.000Z');
    const r = dueCadences(spec, first, at('2030-01-04T12:00:00Z'), 2);
    expect(r.due.map((d) => d.toISOString())).toEqual(['2030-01-03T02:00:00.000Z', '2030-01-04T02:00:00.000Z']);
    expect(r.next.toISOString()).toBe('2030-01-05T02:00:00.000Z');
  });

  it('has nothing due before the next cadence', () => {
    const r = dueCadences({ cron: '*/5 * * * *', timezone: null, intervalMs: null }, at('2030-01-01T10:05:00Z'), at('2030-01-01T10:04:59Z'), 3);
    expect(r.due).toEqual([]);
  });
});

describe('the schedules API', () => {
  it("shows a slot's job in enqueue's names (maxAttempts, backoff, timeoutMs), not the stored row's snake_case", async () => {
    const Tuned = defineJob({
      type: 'tick.tuned',
      schema: z.object({}),
      queue: 'reports',
      priority: 3,
      retry: { maxAttempts: 4, backoff: { kind: 'linear', baseMs: 500, maxMs: 5000 } },
      timeoutMs: 9000,
    });
    client.define(Tuned);
    const [s] = await schedules.define(defineSchedule({ name: 'api.tuned', job: Tuned, everyMs: 60_000, payload: {} }));
    expect(s!.job).toEqual({
      type: 'tick.tuned',
      queue: 'reports',
      payload: {},
      priority: 3,
      maxAttempts: 4,
      backoff: { kind: 'linear', baseMs: 500, maxMs: 5000 },
      timeoutMs: 9000,
    });
    expect((await schedules.get('api.tuned')).job).toEqual(s!.job);
    await schedules.delete('api.tuned');
  });

  it('defines, lists, gets, disables, enables and deletes a slot', async () => {
    const [cron] = await schedules.define(defineSchedule({ name: 'api.cron', job: NoopJob, cron: '*/5 * * * *', payload: { a: 1 } }));
    expect(cron).toMatchObject({ name: 'api.cron', cron: '*/5 * * * *', intervalMs: null, enabled: true, scheduleNamespace: 'default' });
    expect(cron!.job).toMatchObject({ type: 'tick.noop', queue: 'default', payload: { a: 1 } });
    expect(cron!.nextRunAt.getTime()).toBeGreaterThan(Date.now() - 1000);
    expect(cron!.nextRunAt.getUTCMinutes() % 5).toBe(0);

    await schedules.define(defineSchedule({ name: 'api.every', job: 'tick.sleep', everyMs: 10_000, scheduleNamespace: 'reports' }));
    expect((await schedules.list()).map((s) => s.name)).toEqual(['api.cron', 'api.every']);

    expect((await schedules.disable('api.every')).enabled).toBe(false);
    // A long pause: re-enabling starts at the next cadence, it does not fire the backlog.
    await backdateSlot(db.pool, 'api.every', 3600);
    const enabled = await schedules.enable('api.every');
    expect(enabled.enabled).toBe(true);
    expect(enabled.nextRunAt.getTime()).toBeGreaterThan(Date.now());

    await schedules.delete('api.every');
    await expect(schedules.get('api.every')).rejects.toBeInstanceOf(NotFoundError);
    await expect(schedules.delete('api.every')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('leaves an unchanged slot alone, and restarts one whose cadence changed', async () => {
    const def = defineSchedule({ name: 'api.stable', job: NoopJob, everyMs: 60_000 });
    const [first] = await schedules.define(def);
    await backdateSlot(db.pool, 'api.stable', 10);
    const [same] = await schedules.define(def);
    expect(same!.updatedAt).toEqual(first!.updatedAt);
    expect(same!.nextRunAt.getTime()).toBeLessThan(Date.now());
    const [changed] = await schedules.define(defineSchedule({ name: 'api.stable', job: NoopJob, everyMs: 120_000 }));
    expect(changed!.nextRunAt.getTime()).toBeGreaterThan(Date.now());
  });

  it('refuses reserved names, unknown job types and payloads that fail the job’s schema', async () => {
    expect(() => defineSchedule({ name: 'sys.mine', job: NoopJob, everyMs: 5000 })).toThrow(ConfigError);
    // @ts-expect-error refused by the type as by the runtime
    expect(() => defineSchedule({ name: 'both', job: NoopJob, everyMs: 5000, cron: '* * * * *' })).toThrow(/exactly one of cron or everyMs/);
    expect(() => defineSchedule({ name: 'tz', job: NoopJob, cron: '* * * * *', timezone: 'Mars/Olympus' })).toThrow(/unknown time zone/);
    const unknown = await schedules.define(defineSchedule({ name: 'api.unknown', job: 'no.such.type', everyMs: 5000 })).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(ConfigError);
    expect((unknown as ConfigError).message).toMatch(/^invalid schedule "api.unknown": job: unknown job type "no.such.type"/);
    expect((unknown as ConfigError).cause).toBeInstanceOf(UnknownJobTypeError);
    expect(() => defineSchedule({ name: 'api.bad', job: SleepJob, everyMs: 5000, payload: { ms: -1 } })).toThrow(/invalid schedule "api.bad": payload\.ms/);
    const bad = await schedules.define(defineSchedule({ name: 'api.bad', job: 'tick.sleep', everyMs: 5000, payload: { ms: -1 } })).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ConfigError);
    expect((bad as ConfigError).issues[0]!.path).toEqual(['payload', 'ms']);
    expect((bad as ConfigError).message).toMatch(/^invalid schedule "api.bad": payload\.ms/);
    expect((await schedules.list()).map((s) => s.name)).not.toContain('api.bad');
  });

  it('refuses two different definitions of one name in one call, storing neither, and stores one given twice once', async () => {
    const a = defineSchedule({ name: 'api.twin', job: NoopJob, everyMs: 60_000 });
    const b = defineSchedule({ name: 'api.twin', job: NoopJob, everyMs: 120_000 });
    const err = await schedules.define([a, b]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).toBe('invalid schedules: 1: two different schedules are named "api.twin"');
    expect((await schedules.list()).map((s) => s.name)).not.toContain('api.twin');
    const stored = await schedules.define([a, a]);
    expect(stored.map((r) => [r.name, r.intervalMs])).toEqual([['api.twin', 60_000], ['api.twin', 60_000]]);
  });
});

describe('firing a slot', () => {
  it('refuses a late claimer once another moved the slot on (the fence)', async () => {
    await schedules.define(defineSchedule({ name: 'fence.slot', job: NoopJob, everyMs: 60_000 }));
    await backdateSlot(db.pool, 'fence.slot', 90);
    // A claims with a 1 ms lease, stalls; B claims after the lease ran out and fires.
    const a = await claimSlots(db.pool, 'default', 'A', ['default'], null, 10, 1);
    await new Promise((r) => setTimeout(r, 10));
    const b = await claimSlots(db.pool, 'default', 'B', ['default'], null, 10, 30_000);
    const slotA = a.slots.find((s) => s.name === 'fence.slot')!;
    const slotB = b.slots.find((s) => s.name === 'fence.slot')!;
    expect(slotB.nextRunAt).toEqual(slotA.nextRunAt);
    const fire = (slot: typeof slotA, now: Date, limit: number) => {
      const d = dueCadences(slot, slot.nextRunAt, now, limit);
      return { name: slot.name, expected: slot.nextRunAt, nextRunAt: d.next, cadences: d.due.map((x) => x.toISOString()) };
    };
    const byB = await fireSlots(db.pool, 'default', [fire(slotB, b.dbNow!, 1)]);
    expect(byB.filter((f) => f.created)).toHaveLength(1);
    // A computed a wider catch-up window; its fire is refused, nothing is enqueued.
    const byA = await fireSlots(db.pool, 'default', [fire(slotA, a.dbNow!, 5)]);
    expect(byA).toEqual([]);
    const jobs = await db.pool.query("select 1 from workhorse.jobs where dedupe_key like 'slot:fence.slot:%'");
    expect(jobs.rowCount).toBe(1);
  });
});

describe('the schedule runner (long-lived workers)', () => {
  it('fires due slots of its schedule namespaces only, and runs sys.retention with its system worker', async () => {
    await schedules.define([
      defineSchedule({ name: 'runner.mine', job: NoopJob, everyMs: 60_000, scheduleNamespace: 'reports' }),
      defineSchedule({ name: 'runner.other', job: NoopJob, everyMs: 60_000, scheduleNamespace: 'elsewhere' }),
    ]);
    await backdateSlot(db.pool, 'runner.mine', 1);
    await backdateSlot(db.pool, 'runner.other', 1);
    const errors: unknown[] = [];
    const runner = new ScheduleRunner(client, {
      scheduleNamespaces: ['reports', 'sys'],
      intervalMs: 100,
      retention: { olderThanMs: 86_400_000 },
      onError: (e) => errors.push(e),
    });
    await runner.start();
    try {
      await waitFor(
        async () => (await db.pool.query("select 1 from workhorse.jobs where dedupe_key like 'slot:runner.mine:%'")).rowCount,
        (n) => n === 1,
        { what: 'runner.mine to fire' },
      );
      // The built-in slot was stored by the runner; make it due and watch its job run.
      await backdateSlot(db.pool, 'sys.retention', 1);
      const done = await waitFor(
        async () => (await db.pool.query<{ status: string }>("select status from workhorse.jobs where type = 'sys.retention'")).rows,
        (rows) => rows.length === 1 && rows[0]!.status === 'succeeded',
        { what: 'the sys.retention job to succeed' },
      );
      expect(done).toEqual([{ status: 'succeeded' }]);
    } finally {
      await runner.stop();
    }
    const other = await db.pool.query("select 1 from workhorse.jobs where dedupe_key like 'slot:runner.other:%'");
    expect(other.rowCount).toBe(0);
    expect(errors).toEqual([]);
    const registry = await db.pool.query('select 1 from workhorse.worker_registry');
    expect(registry.rowCount).toBe(0);
  });
});

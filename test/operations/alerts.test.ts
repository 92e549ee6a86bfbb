// Each alert rule opened and resolved by its condition created for real:
// a backlog (running jobs not counted), an old ready job, a failing type, a
// killed worker (dead_worker, then stuck_lease for its lease), a handler
// dropped by a rolling deploy, a slot nobody fires, and a transaction held
// open on a second connection. Then the sys.alerts slot on a worker,
// publishing the opening and the resolution through the outbox.
import pg from 'pg';
import * as z from 'zod';
import { defineJob } from '../../src/client/defineJob.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { evaluateAlerts as evaluate } from '../../src/alerts/alertsSlot.js';
import { resolveThresholds, type AlertThresholds } from '../../src/alerts/alertRules.js';
import { Client } from '../../src/client/client.js';
import { webhookSink } from '../../src/outbox/webhookSink.js';
import { defineSchedule } from '../../src/schedules/defineSchedule.js';
import { Schedules } from '../../src/schedules/schedules.js';
import { Worker } from '../../src/worker/worker.js';
import type { Handler } from '../../src/worker/invokeHandler.js';
import { ConfigError } from '../../src/errors.js';
import { parseAlertsOptions } from '../../src/alerts/alertsOptions.js';
import { createRunLog, killAll, spawnWorker, waitRegistered, type SpawnedWorker } from '../fixtures/spawnWorker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { sleep, waitFor } from '../helpers/wait.js';
import { startWebhookReceiver } from '../helpers/webhookReceiver.js';

let db: TestDatabase;
let client: Client;
const children: SpawnedWorker[] = [];
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  const jobs = ['slow', 'late', 'flaky', 'fx.job', 'email.send', 'sms.send', 'report.build'].map((type) => defineJob({ type, schema: z.unknown() }));
  jobs.push(defineJob({ type: 'nobody.handles', schema: z.unknown(), queue: 'orphans' }));
  client = new Client({ connectionString: db.url, jobs });
  await createRunLog(db.pool);
});
afterEach(async () => {
  killAll(children);
  while (cleanups.length) await cleanups.pop()!();
  await db.pool.query('truncate workhorse.jobs, workhorse.job_runtime, workhorse.job_attempts, workhorse.alerts, workhorse.outbox_events, workhorse.schedules');
  await db.pool.query('delete from workhorse.worker_registry');
});
afterAll(async () => {
  await client.close();
  await db.drop();
});

/** Only the named rules, with these thresholds (resolved like the option). */
function only(t: AlertThresholds): Record<string, Record<string, number>> {
  const all = resolveThresholds(t as never);
  return Object.fromEntries(Object.entries(all).filter(([r]) => r in t));
}

/** Each opening and resolution of `rule` went into the outbox on workhorse.alert, in order per alert. */
async function expectPublished(...rules: string[]): Promise<void> {
  const r = await db.pool.query<{ key: string; state: string }>(
    "select key, payload->>'state' as state from workhorse.outbox_events where topic = 'workhorse.alert' order by id",
  );
  for (const rule of rules) {
    const mine = r.rows.filter((e) => e.key.startsWith(`alert:${rule}:`));
    expect(mine.length).toBeGreaterThanOrEqual(2);
    for (const key of new Set(mine.map((e) => e.key))) {
      expect(mine.filter((e) => e.key === key).map((e) => e.state)).toEqual(['open', 'resolved']);
    }
  }
}

const open = async (rule: string) => (await client.alerts({ state: 'open' })).filter((a) => a.rule === rule);

function startWorker(types: Record<string, Handler>, extra: Record<string, unknown> = {}): Worker {
  const w = new Worker(client, { queue: 'default', pollMs: 100, heartbeatMs: 200, ...extra });
  for (const [t, fn] of Object.entries(types)) w.handle(t, fn);
  const run = w.run();
  cleanups.push(() => w.stop().then(() => run));
  return w;
}

describe('alert rules', () => {
  it('backlog: opens above the threshold and counts no running job; resolves when the handlers take them', async () => {
    const rules = only({ backlog: { max: 2 } });
    for (let i = 0; i < 3; i++) await client.enqueue('slow', {}, {});
    const opened = await evaluate(client, rules);
    expect(opened).toMatchObject([{ rule: 'backlog', key: 'default', state: 'open', details: { ready: 3, max: 2 } }]);
    // Evaluated again while it holds: stays open, nothing new published.
    expect(await evaluate(client, rules)).toEqual([]);
    // It grows: the open alert shows what the condition measures now, still one alert, still one event.
    for (let i = 0; i < 2; i++) await client.enqueue('slow', {}, {});
    expect(await evaluate(client, rules)).toEqual([]);
    expect(await open('backlog')).toMatchObject([{ key: 'default', details: { ready: 5, max: 2 } }]);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    startWorker({ slow: () => gate }, { concurrency: 4 });
    await waitFor(async () => (await client.admin.listLeases()).length, (n) => n === 4, { what: 'four running jobs' });
    // Four are running (leased): the ready backlog is 1.
    expect(await evaluate(client, rules)).toMatchObject([{ rule: 'backlog', key: 'default', state: 'resolved' }]);
    release();
    expect(await open('backlog')).toEqual([]);
    await expectPublished('backlog');
  });

  it('oldest_ready: opens when the oldest due job has waited too long; resolves once it ran', async () => {
    const rules = only({ oldest_ready: { maxAgeMs: 400 } });
    await client.enqueue('late', {}, {});
    expect(await evaluate(client, rules)).toEqual([]);
    await sleep(500);
    expect(await evaluate(client, rules)).toMatchObject([{ rule: 'oldest_ready', key: 'default', state: 'open' }]);
    startWorker({ late: async () => 'ok' });
    await waitFor(() => evaluate(client, rules), (c) => c.length === 1 && c[0]!.state === 'resolved', { what: 'oldest_ready resolved' });
    await expectPublished('oldest_ready');
  });

  it('backlog, oldest_ready, unhandled_type: count a waiting job whose sleep ended with no worker left to claim it (a claim would promote it)', async () => {
    const rules = only({ backlog: { max: 0 }, oldest_ready: { maxAgeMs: 300 }, unhandled_type: { minAgeMs: 300 } });
    const nap: Handler = async (_p, ctx) => {
      await ctx.sleep('nap', 200);
      return 'woke';
    };
    const { id } = await client.enqueue('late', {}, {});
    const first = new Worker(client, { queue: 'default', pollMs: 100, heartbeatMs: 200 }).handle('late', nap);
    const run = first.run();
    await waitFor(async () => (await client.getJob(id))?.status, (s) => s === 'waiting', { what: 'the job asleep' });
    // The fleet stops cleanly while the job sleeps: nobody claims its queue any more.
    await first.stop();
    await run;
    await sleep(800);
    expect((await client.getJob(id))?.status).toBe('waiting');
    const opened = await evaluate(client, rules);
    expect(opened.map((a) => a.rule).sort()).toEqual(['backlog', 'oldest_ready', 'unhandled_type']);
    expect(opened.find((a) => a.rule === 'backlog')).toMatchObject({ key: 'default', details: { ready: 1 } });
    expect(opened.find((a) => a.rule === 'unhandled_type')).toMatchObject({ key: 'late@default', details: { ready: 1 } });
    // A worker again: its claim promotes the job, which wakes and finishes; every alert resolves.
    startWorker({ late: nap });
    await waitFor(async () => (await client.getJob(id))?.status, (s) => s === 'succeeded', { what: 'the job done' });
    expect((await evaluate(client, rules)).map((a) => [a.rule, a.state]).sort()).toEqual([
      ['backlog', 'resolved'],
      ['oldest_ready', 'resolved'],
      ['unhandled_type', 'resolved'],
    ]);
  });

  it('failure_rate: opens when most runs of a type fail; resolves when successes bring the rate under', async () => {
    const rules = only({ failure_rate: { windowMs: 60_000, maxRate: 0.5, minFailures: 3 } });
    let failing = true;
    startWorker({
      flaky: async () => {
        if (failing) throw new Error('boom');
        return 'ok';
      },
    });
    for (let i = 0; i < 3; i++) await client.enqueue('flaky', {}, { maxAttempts: 1 });
    await waitFor(async () => (await client.admin.listJobs({ status: 'failed' })).jobs.length, (n) => n === 3, { what: '3 failed jobs' });
    expect(await evaluate(client, rules)).toMatchObject([{ rule: 'failure_rate', key: 'flaky', state: 'open', details: { failures: 3, successes: 0 } }]);
    failing = false;
    for (let i = 0; i < 4; i++) await client.enqueue('flaky', {}, { maxAttempts: 1 });
    await waitFor(async () => (await client.admin.listJobs({ status: 'succeeded' })).jobs.length, (n) => n === 4, { what: '4 succeeded jobs' });
    expect(await evaluate(client, rules)).toMatchObject([{ rule: 'failure_rate', key: 'flaky', state: 'resolved' }]);
    await expectPublished('failure_rate');
  });

  it('dead_worker and stuck_lease: a SIGKILLed worker opens both (one dead_worker, not one per loop); restarted, it resolves the first and its recovery pass the second', async () => {
    const rules = only({ dead_worker: { missedHeartbeats: 2 }, stuck_lease: { graceMs: 0 } });
    const { id } = await client.enqueue('fx.job', {}, {});
    // It fires the sys slots too: its schedule runner and system worker die with it, and open no alert of their own.
    const child = spawnWorker({ label: 'doomed', url: db.url, mode: 'hang', heartbeatMs: 200, scheduleNamespaces: ['sys'] });
    children.push(child);
    await waitRegistered(db.pool, ['doomed', 'doomed:schedules:sys'], [child]);
    await waitFor(async () => (await client.admin.listLeases()).length, (n) => n === 1, { what: 'the child to lease the job' });
    child.child.kill('SIGKILL');
    await child.exited;
    const changes = await waitFor(
      async () => (await evaluate(client, rules), client.alerts({ state: 'open' })),
      (a) => a.length === 2,
      { what: 'dead_worker and stuck_lease open' },
    );
    expect(changes.map((a) => [a.rule, a.key]).sort()).toEqual([
      ['dead_worker', 'doomed'],
      ['stuck_lease', id],
    ]);
    const again = spawnWorker({ label: 'doomed', url: db.url, mode: 'record', heartbeatMs: 200, scheduleNamespaces: ['sys'] });
    children.push(again);
    await waitFor(
      async () => (await evaluate(client, rules), client.alerts({ state: 'open' })),
      (a) => a.length === 0,
      { what: 'both resolved', timeoutMs: 30_000 },
    );
    const all = await client.alerts();
    expect(all.every((a) => a.state === 'resolved' && a.resolvedAt !== null)).toBe(true);
    await expectPublished('dead_worker', 'stuck_lease');
  });

  it('unhandled_type: a rolling deploy drops the handler of a type that still has ready jobs; a worker handling it again resolves it', async () => {
    const rules = only({ unhandled_type: { minAgeMs: 300 } });
    const v1 = startWorker({ 'email.send': async () => 'ok', 'sms.send': async () => 'ok' }, { build: 'v1' });
    await v1.stop();
    // v2 forgot sms.send.
    startWorker({ 'email.send': async () => 'ok' }, { build: 'v2' });
    await client.enqueue('email.send', {}, {});
    await client.enqueue('sms.send', {}, {});
    await sleep(400);
    expect(await evaluate(client, rules)).toMatchObject([
      { rule: 'unhandled_type', key: 'sms.send@default', state: 'open', details: { type: 'sms.send', queue: 'default', ready: 1 } },
    ]);
    startWorker({ 'sms.send': async () => 'ok' }, { build: 'v3' });
    await waitFor(() => evaluate(client, rules), (c) => c.length === 1 && c[0]!.state === 'resolved', { what: 'unhandled_type resolved' });
    await expectPublished('unhandled_type');
  });

  it('unhandled_type: a worker that is draining no longer counts as handling its types (it claims nothing more)', async () => {
    const rules = only({ unhandled_type: { minAgeMs: 300 } });
    let finish!: () => void;
    const held = new Promise((r) => (finish = () => r('ok')));
    const w = startWorker({ 'report.build': () => held });
    await client.enqueue('report.build', {}, {});
    await waitFor(() => db.pool.query('select count(*)::int n from workhorse.job_runtime'), (r) => r.rows[0].n === 1, { what: 'the report running' });
    const stopped = w.stop();
    await waitFor(() => db.pool.query('select state from workhorse.worker_registry where id = $1', [w.workerId]), (r) => r.rows[0]?.state === 'draining', {
      what: 'the worker draining',
    });
    await client.enqueue('report.build', {}, {});
    await sleep(400);
    expect(await evaluate(client, rules)).toMatchObject([{ rule: 'unhandled_type', key: 'report.build@default', state: 'open' }]);
    finish();
    await stopped;
  });

  it('slot_missed: a slot nobody fires for several cadences opens; a worker firing it resolves it', async () => {
    const rules = only({ slot_missed: { cadences: 3 } });
    await new Schedules(client).define(defineSchedule({ name: 'nightly', job: 'report.build', everyMs: 1000 }));
    await db.pool.query(
      "update workhorse.schedules set next_run_at = date_trunc('milliseconds', now() - interval '5 seconds'), last_fired_at = now() - interval '6 seconds' where name = 'nightly'",
    );
    const opened = await evaluate(client, rules);
    expect(opened).toMatchObject([{ rule: 'slot_missed', key: 'nightly', state: 'open' }]);
    // Its times as toISOString writes them, like the alert's own (PostgreSQL's text form before).
    expect((opened[0]!.details as { lastFiredAt: string }).lastFiredAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    startWorker({ 'report.build': async () => 'ok' }, { scheduleNamespaces: ['default'] });
    await waitFor(() => evaluate(client, rules), (c) => c.length === 1 && c[0]!.state === 'resolved', { what: 'slot_missed resolved' });
    await expectPublished('slot_missed');
  });

  it('held_xmin: a transaction held open (idle in transaction) on a second connection opens; committing resolves it', async () => {
    const rules = only({ held_xmin: { maxAgeMs: 400 } });
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    cleanups.push(() => holder.end());
    await holder.query('begin isolation level repeatable read');
    await holder.query('select count(*) from workhorse.jobs');
    const pid = (await holder.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    await sleep(500);
    const opened = await evaluate(client, rules);
    const mine = opened.filter((a) => a.details.pid === pid);
    expect(mine).toMatchObject([{ rule: 'held_xmin', state: 'open', details: { source: 'backend', state: 'idle in transaction' } }]);
    await holder.query('commit');
    const closed = await evaluate(client, rules);
    expect(closed.filter((a) => a.key === mine[0]!.key)).toMatchObject([{ state: 'resolved' }]);
    await expectPublished('held_xmin');
  });

  it('a rule turned off resolves its open alerts (marked turnedOff) and publishes the resolution; the others stay as they are', async () => {
    for (let i = 0; i < 3; i++) await client.enqueue('slow', {}, {});
    const both = only({ backlog: { max: 2 }, oldest_ready: { maxAgeMs: 0 } });
    await waitFor(
      async () => (await evaluate(client, both), open('backlog')),
      (a) => a.length === 1,
      { what: 'backlog open' },
    );
    await waitFor(
      async () => (await evaluate(client, both), open('oldest_ready')),
      (a) => a.length === 1,
      { what: 'oldest_ready open' },
    );
    // backlog turned off (left out of the rules, as `backlog: false` leaves it out) while its condition still holds.
    const changed = await evaluate(client, only({ oldest_ready: { maxAgeMs: 0 } }));
    expect(changed).toMatchObject([{ rule: 'backlog', key: 'default', state: 'resolved', details: { ready: 3, max: 2, turnedOff: true } }]);
    expect(await open('backlog')).toEqual([]);
    expect(await open('oldest_ready')).toHaveLength(1);
    expect(Object.keys(parseAlertsOptions({ rules: { backlog: false } }).thresholds)).not.toContain('backlog');
    await expectPublished('backlog');
  });

  it('refuses a bad threshold with a ConfigError naming it', () => {
    expect(() => parseAlertsOptions({ rules: { backlog: { max: -1 } } })).toThrow(ConfigError);
    expect(() => parseAlertsOptions({ rules: { nope: {} } as never })).toThrow(/nope/);
    expect(Object.keys(parseAlertsOptions({ rules: { held_xmin: false } }).thresholds)).not.toContain('held_xmin');
  });
});

describe('the sys.alerts slot', () => {
  it('without outbox sinks, opens and resolves alerts on its cadence and publishes nothing (the events had no sink and piled up pending)', async () => {
    startWorker(
      {},
      {
        scheduleNamespaces: ['sys'],
        alerts: { everyMs: 1000, rules: { backlog: { max: 0 }, oldest_ready: false, failure_rate: false, dead_worker: false, unhandled_type: false, stuck_lease: false, slot_missed: false, held_xmin: false } },
      },
    );
    await client.enqueue('nobody.handles', {});
    await waitFor(() => open('backlog'), (a) => a.length === 1, { what: 'the backlog alert to open', timeoutMs: 30_000 });
    await db.pool.query("delete from workhorse.jobs where type = 'nobody.handles'");
    await waitFor(() => open('backlog'), (a) => a.length === 0, { what: 'the backlog alert to resolve', timeoutMs: 30_000 });
    expect((await client.alerts({ state: 'resolved' })).map((a) => a.rule)).toContain('backlog');
    const events = await db.pool.query<{ n: number }>("select count(*)::int n from workhorse.outbox_events where topic = 'workhorse.alert'");
    expect(events.rows[0]!.n).toBe(0);
  });

  it('evaluates on its cadence and publishes the opening and the resolution on workhorse.alert through the outbox', async () => {
    const r = await startWebhookReceiver('alert-secret-0123456789');
    cleanups.push(() => r.close());
    startWorker(
      {},
      {
        scheduleNamespaces: ['sys'],
        alerts: { everyMs: 1000, rules: { backlog: { max: 0 }, oldest_ready: false, failure_rate: false, dead_worker: false, unhandled_type: false, stuck_lease: false, slot_missed: false, held_xmin: false } },
        outbox: { sinks: [webhookSink({ url: r.url, secret: 'alert-secret-0123456789', topics: ['workhorse.alert'] })] },
      },
    );
    await client.enqueue('nobody.handles', {});
    await waitFor(() => r.accepted().length, (n) => n >= 1, { what: 'the opening delivered', timeoutMs: 30_000 });
    expect(r.accepted()[0]!.json).toMatchObject({
      topic: 'workhorse.alert',
      key: 'alert:backlog:orphans',
      payload: { rule: 'backlog', key: 'orphans', state: 'open', details: { ready: 1 } },
    });
    await db.pool.query("delete from workhorse.jobs where type = 'nobody.handles'");
    await waitFor(() => r.accepted().length, (n) => n >= 2, { what: 'the resolution delivered', timeoutMs: 30_000 });
    expect(r.accepted()[1]!.json).toMatchObject({ payload: { rule: 'backlog', key: 'orphans', state: 'resolved' } });
    // Times as toISOString writes them, like the envelope's publishedAt.
    const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
    const opening = r.accepted()[0]!.json as { publishedAt: string; payload: { openedAt: string; resolvedAt: string | null } };
    const resolution = r.accepted()[1]!.json as { payload: { openedAt: string; resolvedAt: string } };
    expect(opening.publishedAt).toMatch(iso);
    expect(opening.payload.openedAt).toMatch(iso);
    expect(opening.payload.resolvedAt).toBeNull();
    expect(resolution.payload.resolvedAt).toMatch(iso);
    expect(resolution.payload.openedAt).toBe(opening.payload.openedAt);
    expect(r.accepted().every((q) => q.signatureOk)).toBe(true);
    const runs = await db.pool.query<{ status: string }>("select status from workhorse.jobs where type = 'sys.alerts'");
    expect(runs.rows.length).toBeGreaterThanOrEqual(2);
  });
});

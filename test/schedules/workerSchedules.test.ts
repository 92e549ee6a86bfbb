// A long-lived Worker given `schedules` stores and declares them at start,
// as a tick does its app's, and fires them while it runs; a worker of a
// build without them leaves them alone (a schedule removed from the app
// stops firing once no running worker or tick declares it). Before, a
// Worker took no schedules: an app run by long-lived workers alone had to
// store its schedules some other way.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, createClient, defineJob, defineSchedule, ScheduleRunner, Schedules, Worker, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { sleep, waitFor } from '../helpers/wait.js';
import { backdateSlot } from '../tick/support.js';

const Digest = defineJob({ type: 'worker-schedules.digest', schema: z.object({ n: z.number() }) });
const digest = defineSchedule({ name: 'worker.digest', job: Digest, payload: { n: 1 }, everyMs: 3_600_000 });

let db: TestDatabase;
let client: Client;
const workers: Worker[] = [];
const ran: number[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Digest], poolMax: 4 });
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

function startWorker(options: ConstructorParameters<typeof Worker>[1]): Worker {
  const w = new Worker(client, { pollMs: 50, ...options });
  w.handle(Digest, async ({ n }) => {
    ran.push(n);
  });
  workers.push(w);
  void w.run();
  return w;
}

const firedJobs = async () => (await db.pool.query("select id from workhorse.jobs where dedupe_key like 'slot:worker.digest:%'")).rowCount;

describe('a Worker given schedules', () => {
  it('stores them declared at start and fires them while it runs', async () => {
    startWorker({ scheduleNamespaces: ['default'], schedules: [digest] });
    const schedules = new Schedules(client);
    await waitFor(async () => (await schedules.list()).find((s) => s.name === 'worker.digest')?.declared, (d) => d === true, { what: 'the slot stored' });
    await backdateSlot(db.pool, 'worker.digest', 10);
    await waitFor(() => ran.length, (n) => n === 1, { what: 'the digest to run' });
    expect(await firedJobs()).toBe(1);
  });

  it("runs the sys.* jobs on a system worker that beats at the worker's heartbeat (it beat every 45 s: its calls waited out a 180 s lease on a frozen connection)", async () => {
    const w = startWorker({ scheduleNamespaces: ['sys'], heartbeatMs: 2000, workerId: 'beats-2s' });
    const rows = await waitFor(
      async () => (await db.pool.query<{ worker_id: string; heartbeat_ms: number }>("select id as worker_id, heartbeat_ms from workhorse.worker_registry where id like 'beats-2s%' and state = 'active'")).rows,
      (rs) => rs.some((r) => r.worker_id.endsWith(':sys')),
      { what: 'the system worker to register' },
    );
    expect(rows.map((r) => r.heartbeat_ms)).toEqual(rows.map(() => 2000));
    await w.stop();
  });

  it('is left alone by a worker of a build without it', async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    startWorker({ scheduleNamespaces: ['default'] });
    await backdateSlot(db.pool, 'worker.digest', 10);
    // Several of its runner's passes (every 250 ms with pollMs 50).
    await sleep(1_500);
    expect(await firedJobs()).toBe(1);
    expect(ran).toEqual([1]);
  });

  it('refuses schedules of a namespace it does not fire, and values that are not defineSchedule() values', () => {
    expect(() => new Worker(client, { schedules: [digest] })).toThrow(ConfigError);
    expect(() => new Worker(client, { scheduleNamespaces: ['other'], schedules: [digest] })).toThrow(
      /schedule "worker\.digest" is in schedule namespace "default", which this worker does not fire: add "default" to scheduleNamespaces/,
    );
    // A ScheduleRunner stored such a schedule (declared) and never fired it; it is refused the same way.
    let refused: unknown;
    try {
      new ScheduleRunner(client, { scheduleNamespaces: ['other', 'sys'], schedules: [digest] });
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as ConfigError).issues[0]!.path).toEqual(['schedules', 0, 'scheduleNamespace']);
    expect((refused as Error).message).toMatch(/which this schedule runner does not fire: add "default"/);
    expect(() => new Worker(client, { scheduleNamespaces: ['default'], schedules: [{ name: 'x' } as never] })).toThrow(/a schedule must be a defineSchedule\(\) value/);
  });

  it("refuses a schedule whose job is a definition its client does not have, as it refuses a type name it does not have (it enqueued jobs no handler claims)", () => {
    const Other = defineJob({ type: 'worker-schedules.other', schema: z.object({}) });
    const other = defineSchedule({ name: 'worker.other', job: Other, payload: {}, everyMs: 60_000 });
    for (const build of [
      () => new Worker(client, { scheduleNamespaces: ['default'], schedules: [other] }),
      () => new ScheduleRunner(client, { scheduleNamespaces: ['default'], schedules: [other] }),
    ]) {
      let refused: unknown;
      try {
        build();
      } catch (err) {
        refused = err;
      }
      expect(refused).toBeInstanceOf(ConfigError);
      expect((refused as Error).message).toMatch(/schedule "worker\.other": schedules\.0\.job: unknown job type "worker-schedules\.other"/);
    }
  });

  it('refuses a Schedules or a ScheduleRunner built on something other than a client', () => {
    expect(() => new Schedules({} as never)).toThrow(/Schedules needs a workhorse Client as its first argument/);
    expect(() => new Schedules(null as never)).toThrow(ConfigError);
    expect(() => new ScheduleRunner({} as never, { scheduleNamespaces: ['default'] })).toThrow(/a ScheduleRunner needs a workhorse Client/);
  });
});

describe('intervals and lifetimes that other parts bound', () => {
  it('runs the slots of a worker polling every 10 ms (its companion took 50 ms, under a runner\'s least, and run() failed naming intervalMs)', async () => {
    const w = new Worker(client, { scheduleNamespaces: ['default'], schedules: [digest], pollMs: 10, workerId: 'polls-10ms' });
    w.handle(Digest, async () => undefined);
    const run = w.run();
    const schedules = new Schedules(client);
    await waitFor(async () => (await schedules.list()).find((s) => s.name === 'worker.digest')?.declared, (d) => d === true, { what: 'the slot stored' });
    expect(w.runtimeState().running).toBe(true);
    await w.stop();
    await expect(run).resolves.toBeUndefined();
  });

  it("starts a runner with sys at an interval past a worker's longest poll (its system worker was refused, naming pollMs)", async () => {
    const runner = new ScheduleRunner(client, { scheduleNamespaces: ['sys'], intervalMs: 700_000, workerId: 'slow-runner' });
    try {
      await runner.start();
      const row = await waitFor(
        async () => (await client.admin.listWorkers()).find((x) => x.id === 'slow-runner:sys'),
        (r) => r !== undefined,
        { what: 'the system worker to register' },
      );
      expect(row!.queues).toEqual(['sys']);
    } finally {
      await runner.stop();
    }
  });

  it('stops what a start still under way starts: stop() during start() leaves no system worker running (it was left active, and crashed the process once the client closed)', async () => {
    const runner = new ScheduleRunner(client, { scheduleNamespaces: ['sys'], workerId: 'stopped-starting' });
    const started = runner.start();
    await runner.stop();
    await started;
    // Its system worker registers within a poll of starting: give it that long to show if it was started.
    await sleep(1_500);
    const rows = (await client.admin.listWorkers()).filter((w) => w.id.startsWith('stopped-starting'));
    expect(rows.filter((w) => w.state === 'active')).toEqual([]);
  });

  it('lets a start that failed be tried again (it said the runner was started already)', async () => {
    const down = createClient({ connectionString: 'postgres://nobody@127.0.0.1:1/none', callTimeoutMs: 1_000 });
    try {
      const runner = new ScheduleRunner(down, { scheduleNamespaces: ['default'] });
      const first = await runner.start().catch((e: unknown) => e);
      expect(first).not.toBeInstanceOf(ConfigError);
      const again = await runner.start().catch((e: unknown) => e);
      expect(again).not.toBeInstanceOf(ConfigError);
      expect((again as Error).constructor).toBe((first as Error).constructor);
    } finally {
      await down.close();
    }
  });

  it('refuses a second start, and a start after stop, instead of a second loop or none', async () => {
    const runner = new ScheduleRunner(client, { scheduleNamespaces: ['default'], intervalMs: 200 });
    await runner.start();
    await expect(runner.start()).rejects.toThrow(/was started already/);
    await runner.stop();
    await expect(runner.start()).rejects.toThrow(ConfigError);
    await expect(runner.start()).rejects.toThrow(/was stopped, and a runner runs once: create another/);
  });
});

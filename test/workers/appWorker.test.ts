// appWorker(app): a defineApp() app as a long-lived worker process does what
// a tick of it does: its handlers run, its schedule fires, and the sys slots
// (retention) are stored and run. Written by hand the glue was easy to get
// half right: without scheduleNamespaces and schedules a worker fired no
// schedule and ran no retention, silently.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  appWorker,
  createClient,
  createWorkhorseAdapter,
  defineApp,
  defineJob,
  defineSchedule,
  defineWorkerProcess,
  runWorkerProcess,
  webhookSink,
} from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Tick = defineJob({ type: 'appworker.tick', schema: z.object({}) });
// A job of a queue of its own: the worker claims from the app's queues, as a tick of the app does (it claimed only from `default`).
const Email = defineJob({ type: 'appworker.email', schema: z.object({ to: z.string() }), queue: 'email' });
const app = defineApp({
  jobs: [Tick, Email],
  configure: (w) => {
    w.handle(Tick, () => 'fired');
    w.handle(Email, () => 'sent');
  },
  schedules: [defineSchedule({ name: 'appworker.every-second', job: Tick, everyMs: 1000 })],
  outbox: { sinks: [webhookSink({ url: 'http://127.0.0.1:47999/hook', secret: 'appworker-secret-0123456789' })] },
});

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('appWorker', () => {
  it("runs the app's handlers on the app's queues, fires its schedule and runs the sys slots in a worker process", async () => {
    const proc = await runWorkerProcess(
      defineWorkerProcess({
        adapter: () => createWorkhorseAdapter({ connectionString: db.url, jobs: app.jobs, poolSize: 4 }),
        workers: [appWorker(app, { pollMs: 50, listen: false, build: 'app-b3' })],
      }),
      { log: () => undefined },
    );
    try {
      const client = createClient({ connectionString: db.url, jobs: app.jobs });
      await client.enqueue(Email, { to: 'a@example.com' });
      await client.close();
      await waitFor(
        async () => (await db.pool.query<{ n: number }>("select count(*)::int n from workhorse.jobs where type = 'appworker.email' and status = 'succeeded'")).rows[0]!.n,
        (n) => n === 1,
        { what: "the job of the app's email queue to run", timeoutMs: 20_000 },
      );
      await waitFor(
        async () => (await db.pool.query<{ n: number }>("select count(*)::int n from workhorse.jobs where type = 'appworker.tick' and status = 'succeeded'")).rows[0]!.n,
        (n) => n >= 1,
        { what: 'the schedule to fire and its job to run', timeoutMs: 20_000 },
      );
      const slots = await db.pool.query<{ name: string }>('select name from workhorse.schedules order by name');
      expect(slots.rows.map((r) => r.name)).toEqual(expect.arrayContaining(['appworker.every-second', 'sys.outbox', 'sys.retention']));
      // Its system worker (the sys slots' jobs) carries its build: it registered as `unversioned`.
      const builds = await db.pool.query<{ id: string; build: string }>('select id, build from workhorse.worker_registry order by id');
      expect(builds.rows.some((r) => r.id.endsWith(':sys'))).toBe(true);
      expect(builds.rows.map((r) => r.build)).toEqual(builds.rows.map(() => 'app-b3'));
    } finally {
      proc.shutdown('SIGTERM');
      expect(await proc.done).toBe('drained');
    }
  }, 40_000);

  it('lets the options win: a process told to run no sys slot carries neither the outbox nor the alerts', () => {
    const spec = appWorker(app, { scheduleNamespaces: ['default'], concurrency: 3 });
    expect(spec.options).toMatchObject({ scheduleNamespaces: ['default'], concurrency: 3, schedules: app.schedules });
    expect(spec.options).not.toHaveProperty('outbox');
    expect(appWorker(app).options).toMatchObject({ scheduleNamespaces: ['default', 'sys'], outbox: app.outbox, queues: ['default', 'email'] });
    // Queues given win, in either spelling.
    expect(appWorker(app, { queue: 'email' }).options).toMatchObject({ queue: 'email' });
    expect(appWorker(app, { queue: 'email' }).options).not.toHaveProperty('queues');
    expect(appWorker(app, { queues: ['x'] }).options).toMatchObject({ queues: ['x'] });
  });
});

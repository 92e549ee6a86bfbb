// The runtime role (sql/008_runtime_role.sql): a login role that is only a
// member of workhorse_runtime does the whole runtime job (enqueue, claim,
// settle, retry, fail, fire recurring slots, operator actions) and can
// create, alter, drop or truncate nothing. Objects a later migration adds
// are granted too. On the shared test server, which trusts 127.0.0.1 logins.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import * as z from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineApp } from '../../src/app/defineApp.js';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { migrate } from '../../src/db/migrate.js';
import { findSqlDir } from '../../src/db/sqlFiles.js';
import { defineSchedule } from '../../src/schedules/defineSchedule.js';
import { runTick } from '../../src/tick/runTick.js';
import { PermanentJobError } from '../../src/errorJson.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createRuntimeLogin, type RuntimeLogin } from '../helpers/runtimeLogin.js';

const Ok = defineJob({ type: 'rt.ok', schema: z.object({ n: z.number() }) });
const Broken = defineJob({ type: 'rt.broken', schema: z.object({}), retry: { maxAttempts: 3 } });
const Flaky = defineJob({ type: 'rt.flaky', schema: z.object({}), retry: { maxAttempts: 3, backoff: { kind: 'fixed', baseMs: 60_000, maxMs: 60_000 } } });
const everySecond = defineSchedule({ name: 'rt.every-second', job: Ok, payload: { n: 0 }, everyMs: 1000 });

const app = defineApp({
  jobs: [Ok, Broken, Flaky],
  schedules: [everySecond],
  configure(worker) {
    worker.handle(Ok, async ({ n }) => ({ doubled: n * 2 }));
    worker.handle(Broken, async () => {
      throw new PermanentJobError('broken for good');
    });
    worker.handle(Flaky, async () => {
      throw new Error('try again later');
    });
  },
});

let db: TestDatabase;
let rt: RuntimeLogin;
let login: string;
let runtimeUrl: string;
let runtime: pg.Pool;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  rt = await createRuntimeLogin(db.url);
  login = rt.name;
  runtimeUrl = rt.url;
  runtime = new pg.Pool({ connectionString: runtimeUrl, max: 2 });
  runtime.on('error', () => undefined);
  client = createClient({ connectionString: runtimeUrl, jobs: app.jobs });
});

afterAll(async () => {
  await client?.close();
  await runtime?.end();
  await db?.drop();
  await rt?.drop();
});

describe('a login role that is a member of workhorse_runtime', () => {
  it('is not the owner of anything and holds no CREATE on the schema', async () => {
    const r = await runtime.query<{ me: string; create: boolean; owns: number }>(
      `select current_user as me,
              has_schema_privilege('workhorse', 'create') as create,
              (select count(*)::int from pg_class where relnamespace = 'workhorse'::regnamespace and pg_has_role(relowner, 'usage')) as owns`,
    );
    expect(r.rows[0]).toEqual({ me: login, create: false, owns: 0 });
  });

  it('enqueues, claims, settles, retries and fails jobs and fires recurring slots in a tick', async () => {
    await client.ready();
    const ok = await Promise.all([1, 2, 3].map((n) => client.enqueue(Ok, { n })));
    const broken = await client.enqueue(Broken, {});
    const flaky = await client.enqueue(Flaky, {});
    const tick = () => runTick({ connectionString: runtimeUrl, app, deadline: new Date(Date.now() + 15_000), heartbeatMs: 500 });
    // The first tick stores the slots (first cadence one interval ahead) and runs the five jobs.
    expect(await tick()).toMatchObject({ claimed: 5, succeeded: 3, failed: 1, retried: 1 });
    // Both slots due now: the next tick fires them (the app's and sys.retention) and runs their jobs.
    await db.pool.query(`update workhorse.schedules set next_run_at = date_trunc('milliseconds', now() - interval '1 second')`);
    const second = await tick();
    expect(second.slotsFired).toBe(2);
    expect(second.succeeded).toBe(2);
    for (const { id } of ok) expect(await client.getJob(id)).toMatchObject({ status: 'succeeded' });
    expect((await client.getJob(ok[1]!.id))?.result).toEqual({ doubled: 4 });
    expect(await client.getJob(broken.id)).toMatchObject({ status: 'failed' });
    expect(await client.getJob(flaky.id)).toMatchObject({ status: 'ready', attempt: 1 });
    const slotJobs = await db.pool.query(`select count(*)::int as n from workhorse.jobs where dedupe_key like 'slot:rt.every-second:%'`);
    expect(slotJobs.rows[0].n).toBeGreaterThanOrEqual(1);
    const leases = await db.pool.query('select count(*)::int as n from workhorse.job_runtime');
    expect(leases.rows[0].n).toBe(0);
  });

  it('runs the operator actions: cancel, retry, list, pause and resume a queue', async () => {
    const job = await client.enqueue(Ok, { n: 9 }, { runAt: new Date(Date.now() + 3_600_000) });
    expect(await client.cancel(job.id)).toMatchObject({ status: 'cancelled' });
    expect(await client.retry(job.id)).toMatchObject({ status: 'ready' });
    expect((await client.admin.listJobs({ status: 'failed' })).jobs.map((j) => j.type)).toEqual(['rt.broken']);
    await client.admin.pauseQueue('default');
    await client.admin.resumeQueue('default');
  });

  const refused: [string, string][] = [
    ['drop a table', 'drop table workhorse.jobs'],
    ['alter a table', 'alter table workhorse.jobs add column extra integer'],
    ['truncate a table', 'truncate workhorse.job_attempts'],
    ['create a table in the schema', 'create table workhorse.extra (id integer)'],
    ['create an index', 'create index on workhorse.jobs (type)'],
    ['drop an index', 'drop index workhorse.jobs_ready_idx'],
    ['drop the schema', 'drop schema workhorse cascade'],
    ['create a schema', 'create schema wh_runtime_extra'],
    ['rename a protocol function', 'alter function workhorse.claim_many_v1 rename to claim_many_v0'],
    ['drop a protocol function', 'drop function workhorse.enqueue_v1'],
    ['replace a protocol function', `create or replace function workhorse.grant_runtime_v1() returns boolean language sql as 'select true'`],
    ['re-grant privileges', 'select workhorse.grant_runtime_v1()'],
    ['record a migration', `insert into workhorse.migrations (version, name) values (999, 'extra')`],
    ['erase a migration', 'delete from workhorse.migrations'],
  ];
  for (const [what, sql] of refused) {
    it(`may not ${what}`, async () => {
      await expect(runtime.query(sql)).rejects.toMatchObject({ code: '42501' }); // insufficient_privilege
    });
  }

  it('after all of that, finds the schema as the migration left it', async () => {
    // Every object is still there, under its own name, owned by the migrating role.
    const r = await db.pool.query<{ tables: number; functions: number; foreign: number }>(
      `select (select count(*)::int from pg_tables where schemaname = 'workhorse') as tables,
              (select count(*)::int from pg_proc where pronamespace = 'workhorse'::regnamespace and proname in ('claim_many_v1', 'enqueue_v1', 'grant_runtime_v1')) as functions,
              (select count(*)::int from pg_class where relnamespace = 'workhorse'::regnamespace and relowner <> (select nspowner from pg_namespace where nspname = 'workhorse')) as foreign`,
    );
    expect(r.rows[0]!.tables).toBeGreaterThanOrEqual(8);
    expect(r.rows[0]!.foreign).toBe(0);
    const fns = await db.pool.query(`select count(*)::int as n from pg_proc where pronamespace = 'workhorse'::regnamespace and proname = 'claim_many_v0'`);
    expect(fns.rows[0].n).toBe(0);
    expect(r.rows[0]!.functions).toBeGreaterThanOrEqual(3);
    const mig = await db.pool.query('select max(version)::int as v, count(*)::int as n from workhorse.migrations');
    expect(mig.rows[0].v).toBeLessThan(999);
  });

  it('may use what a later migration adds: its table and its function', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wh-sql-'));
    try {
      cpSync(findSqlDir(), dir, { recursive: true });
      // Tables go in a numbered file, functions in a protocol file (both listed in ORDER).
      writeFileSync(join(dir, '999_later.sql'), `create table workhorse.later_notes (id bigint generated by default as identity primary key, note text not null);`);
      writeFileSync(
        join(dir, 'protocol', 'later.sql'),
        `create function workhorse.add_note_v1(p_note text) returns bigint language sql as
           $$ insert into workhorse.later_notes (note) values (p_note) returning id $$;`,
      );
      const order = readFileSync(join(dir, 'ORDER'), 'utf8').replace('protocol/reset.sql', '999_later.sql\nprotocol/reset.sql');
      writeFileSync(join(dir, 'ORDER'), order.replace('protocol/grants.sql', 'protocol/later.sql\nprotocol/grants.sql'));
      expect((await migrate({ connectionString: db.url, sqlDir: dir })).applied).toEqual([999]);
      const r = await runtime.query<{ id: string }>(`select workhorse.add_note_v1('from the runtime') as id`);
      expect(Number(r.rows[0]!.id)).toBeGreaterThan(0);
      await expect(runtime.query('drop table workhorse.later_notes')).rejects.toMatchObject({ code: '42501' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await db.pool.query(`drop function if exists workhorse.add_note_v1; drop table if exists workhorse.later_notes; delete from workhorse.migrations where version = 999`);
    }
  });

  it('migrate() as a runtime login says that migrations run as the schema owner', async () => {
    await expect(migrate({ connectionString: runtimeUrl })).rejects.toMatchObject({
      code: 'migration_not_permitted',
      message: expect.stringMatching(/permission denied.*migrations run as the owner of the workhorse schema.*not as a login of the workhorse_runtime role/),
    });
  });
});

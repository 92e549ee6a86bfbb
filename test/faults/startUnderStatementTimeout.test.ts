// A worker process whose start-up check meets a statement the role's
// statement_timeout cancels (57014) waits it out, as it waits out a
// database that does not answer: it exited at once (`workhorse worker:
// canceling statement due to statement timeout`, exit 1). A privilege the
// login lacks still fails the start at once, saying what to do: that is the
// deploy's configuration, not a fault that passes.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, defineWorkerProcess, runWorkerProcess } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { asServerAdmin, createRuntimeLogin, type RuntimeLogin } from '../helpers/runtimeLogin.js';

const Job = defineJob({ type: 'start.timeout', schema: z.object({}) });
let db: TestDatabase;
let login: RuntimeLogin;

beforeAll(async () => {
  db = await createTestDatabase();
  login = await createRuntimeLogin(db.url, { prefix: 'wh_starttimeout' });
});
afterAll(async () => {
  await asServerAdmin(`alter role ${login.name} reset statement_timeout`).catch(() => undefined);
  await asServerAdmin(`grant workhorse_runtime to ${login.name}`).catch(() => undefined);
  await db?.drop();
  await login?.drop();
});

const processFor = () =>
  defineWorkerProcess({
    client: () => createClient({ connectionString: login.url, jobs: [Job] }),
    workers: [{ options: { workerId: 'start-timeout', listen: false }, configure: (w) => void w.handle(Job, () => 'ok') }],
  });

it('waits out a start-up check its role’s statement_timeout cancels, then runs', async () => {
  await asServerAdmin(`alter role ${login.name} set statement_timeout = '200ms'`);
  const holder = await db.pool.connect();
  const lines: string[] = [];
  try {
    await holder.query('begin');
    await holder.query('lock table workhorse.migrations in access exclusive mode');
    const started = runWorkerProcess(processFor(), { log: (l) => lines.push(l) });
    await new Promise((r) => setTimeout(r, 1_200));
    await holder.query('rollback');
    const proc = await started;
    expect(lines.some((l) => /^\[workhorse\] cannot reach the database \(the database cancelled the statement \(a statement_timeout/.test(l))).toBe(true);
    proc.shutdown('SIGTERM');
    expect(await proc.done).toBe('drained');
  } finally {
    holder.release();
    await asServerAdmin(`alter role ${login.name} reset statement_timeout`);
  }
});

it('fails at once, saying what to do, when the login lacks the privilege', async () => {
  await asServerAdmin(`revoke workhorse_runtime from ${login.name}`);
  try {
    const t0 = Date.now();
    const err = await runWorkerProcess(processFor(), { log: () => undefined }).then(
      () => 'started',
      (e: unknown) => e,
    );
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect((err as Error).message).toMatch(/permission denied .*; the database login lacks a privilege: make it a member of workhorse_runtime/);
  } finally {
    await asServerAdmin(`grant workhorse_runtime to ${login.name}`);
  }
});

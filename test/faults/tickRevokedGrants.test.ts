// A tick whose claim meets the runtime role's grants revoked for a moment
// (42501, a refusal an operator ends) ends its claiming, lets its running
// handlers finish and writes their outcomes once the grants are back, as
// for a connection fault; then it fails with a DatabaseUnavailableError
// saying what to do. It stopped hard at once: the handlers were aborted with
// a TickDeadlineError 13 s before the deadline, their outcomes given up,
// and recovery failed every job of maxAttempts 1 without its having run to
// the end; the tick rejected with PostgreSQL's own error.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { defineApp } from '../../src/app/defineApp.js';
import { createClient, DatabaseUnavailableError, defineJob } from '../../src/index.js';
import { runTick } from '../../src/tick/runTick.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { asServerAdmin, createRuntimeLogin, type RuntimeLogin } from '../helpers/runtimeLogin.js';
import { waitFor } from '../helpers/wait.js';

const Once = defineJob({ type: 'revoke.tick', schema: z.object({ n: z.number() }), retry: { maxAttempts: 1 } });
let db: TestDatabase;
let login: RuntimeLogin;

beforeAll(async () => {
  db = await createTestDatabase();
  login = await createRuntimeLogin(db.url, { prefix: 'wh_tickrevoke' });
});

afterAll(async () => {
  await asServerAdmin(`grant workhorse_runtime to ${login.name}`).catch(() => undefined);
  await db?.drop();
  await login?.drop();
});

it('lets its handlers finish and writes their outcomes once the grants are back, then fails saying what to do', async () => {
  const client = createClient({ connectionString: db.url, jobs: [Once] });
  const ids = (await client.enqueueMany([1, 2, 3, 4, 5].map((n) => ({ job: Once, payload: { n } })))).map((r) => r.id);
  await client.close();
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let started = 0;
  const aborts: unknown[] = [];
  const app = defineApp({
    jobs: [Once],
    configure: (w) =>
      w.handle(Once, async ({ n }, ctx) => {
        started++;
        ctx.signal.addEventListener('abort', () => aborts.push(ctx.signal.reason));
        await gate;
        return n;
      }),
  });
  const lines: string[] = [];
  const deadline = Date.now() + 15_000;
  // Four handlers take the first claim; the claim for the fifth job is sent once they are done, while the grants are revoked.
  const log = (l: string, e?: unknown) => lines.push(e === undefined ? l : `${l} ${e instanceof Error ? e.message : String(e)}`);
  const tick = runTick({ app, connectionString: login.url, deadline: new Date(deadline), concurrency: 4, heartbeatMs: 1_000, scheduleNamespaces: [], log }).then(
    () => new Error('the tick should have failed'),
    (e: unknown) => e,
  );
  await waitFor(() => started, (s) => s === 4, { what: 'four handlers to start' });
  await asServerAdmin(`revoke workhorse_runtime from ${login.name}`);
  release();
  await new Promise((r) => setTimeout(r, 2_000));
  await asServerAdmin(`grant workhorse_runtime to ${login.name}`);
  const err = await tick;
  expect(Date.now()).toBeLessThan(deadline);
  expect(aborts).toEqual([]);
  expect(err).toBeInstanceOf(DatabaseUnavailableError);
  expect((err as Error).message).toMatch(/^the database refused the tick's work: permission denied .*\(42501\); .*workhorse_runtime/);
  const jobs = await db.pool.query<{ id: string; status: string; attempt: number }>('select id::text, status, attempt from workhorse.jobs order by id');
  // The four ran once and succeeded; the fifth was never claimed.
  expect(jobs.rows.map((j) => [j.status, j.attempt])).toEqual([...ids.slice(0, 4).map(() => ['succeeded', 1]), ['ready', 0]]);
  expect((await db.pool.query('select count(*)::int n from workhorse.job_runtime')).rows[0].n).toBe(0);
  expect((await db.pool.query('select count(*)::int n from workhorse.worker_registry')).rows[0].n).toBe(0);
  // Each distinct error once, and the repeats counted in one line as the tick ends: every failed try of the
  // heartbeat and the settlement was a line of its own.
  const first = lines.filter((l) => l.startsWith('[workhorse] tick worker error: '));
  expect(first.length).toBeGreaterThan(0);
  expect(new Set(first).size).toBe(first.length);
  const again = lines.filter((l) => /^\[workhorse\] tick worker error, \d+ more times? in this tick: /.test(l));
  expect(again.length).toBeGreaterThan(0);
  expect(again.length).toBeLessThanOrEqual(first.length);
}, 60_000);

it('fails by its deadline saying the database refused the work, and what to do, when the grants stay revoked', async () => {
  await db.pool.query('truncate workhorse.jobs cascade');
  const client = createClient({ connectionString: db.url, jobs: [Once] });
  await client.enqueueMany([1, 2, 3, 4, 5].map((n) => ({ job: Once, payload: { n } })));
  await client.close();
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let started = 0;
  const app = defineApp({
    jobs: [Once],
    configure: (w) =>
      w.handle(Once, async ({ n }) => {
        started++;
        await gate;
        return n;
      }),
  });
  const deadline = Date.now() + 6_000;
  const tick = runTick({ app, connectionString: login.url, deadline: new Date(deadline), concurrency: 4, heartbeatMs: 1_000, scheduleNamespaces: [], log: () => undefined }).then(
    () => new Error('the tick should have failed'),
    (e: unknown) => e,
  );
  try {
    await waitFor(() => started, (s) => s === 4, { what: 'four handlers to start' });
    await asServerAdmin(`revoke workhorse_runtime from ${login.name}`);
    release();
    const err = await tick;
    expect(Date.now()).toBeLessThan(deadline);
    expect(err).toBeInstanceOf(DatabaseUnavailableError);
    // It said "the database did not answer in time", with no word of the refusal or its remedy.
    expect((err as Error).message).toMatch(
      /^the tick could not write the outcome of 4 jobs by its deadline \(the database refused the tick's work: permission denied .*\(42501\); .*workhorse_runtime.*\): their leases expire and recovery returns them$/,
    );
  } finally {
    await asServerAdmin(`grant workhorse_runtime to ${login.name}`);
  }
}, 60_000);

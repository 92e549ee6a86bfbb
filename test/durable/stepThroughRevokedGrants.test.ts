// A step's writes, a transactional step's own statements and the
// settlement wait out the runtime role's privileges being revoked for a
// while shorter than the lease, as they wait out a connection fault. Before,
// the first 42501 failed the step (a job of maxAttempts 1 failed for good)
// and a finished handler's settlement was given up at once. The worker runs
// as a login in the workhorse_runtime role; the test takes that membership
// away for 1.5 s (4 s leases) just as the handlers reach their steps.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, Worker, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { asServerAdmin, createRuntimeLogin, type RuntimeLogin } from '../helpers/runtimeLogin.js';
import { waitFor } from '../helpers/wait.js';

const Once = defineJob({ type: 'revoke.step', schema: z.object({ n: z.number() }), retry: { maxAttempts: 1 } });
let db: TestDatabase;
let login: RuntimeLogin;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  login = await createRuntimeLogin(db.url, { prefix: 'wh_revoke' });
  await db.pool.query('create table public.effects (job int not null, step text not null)');
  // The handler's own table is the login's own grant: only the role's grants on workhorse are taken away.
  await db.pool.query(`grant insert, select on public.effects to ${login.name}`);
  client = createClient({ connectionString: login.url, jobs: [Once], poolMax: 6 });
});

afterAll(async () => {
  await client?.close();
  // The database first: the login's grant on public.effects lives there, and a role with grants cannot be dropped.
  await db?.drop();
  await login?.drop();
});

describe('the runtime role revoked for less than a lease', () => {
  it('is waited out by steps, transactional steps and settlements: every job succeeds on its only attempt, each effect once', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started = 0;
    const bodies: string[] = [];
    const worker = new Worker(client, { concurrency: 4, pollMs: 50, heartbeatMs: 1_000 });
    worker.events.on('error', () => undefined);
    worker.handle(Once, async ({ n }, ctx) => {
      started++;
      await gate;
      const plain = () => ctx.step('plain', () => void bodies.push(`plain ${n}`));
      const tx = () =>
        ctx.txStep('tx', async (t) => {
          await t.query("insert into public.effects values ($1, 'tx')", [n]);
        });
      // Half meet the revocation in a step, half in a transactional step.
      if (n % 2) await plain().then(tx);
      else await tx().then(plain);
      return n;
    });
    const ids = (await client.enqueueMany([1, 2, 3, 4].map((n) => ({ job: Once, payload: { n } })))).map((r) => r.id);
    const run = worker.run();
    try {
      await waitFor(() => started, (s) => s === 4, { what: 'the handlers to start' });
      await asServerAdmin(`revoke workhorse_runtime from ${login.name}`);
      release();
      await new Promise((r) => setTimeout(r, 1_500));
      await asServerAdmin(`grant workhorse_runtime to ${login.name}`);
      const jobs = await waitFor(
        () => Promise.all(ids.map((id) => client.getJob(id))),
        (js) => js.every((j) => j?.status === 'succeeded' || j?.status === 'failed'),
        { what: 'the jobs to end', timeoutMs: 30_000 },
      );
      expect(jobs.map((j) => [j!.status, j!.attempt])).toEqual(ids.map(() => ['succeeded', 1]));
      expect(bodies.sort()).toEqual(['plain 1', 'plain 2', 'plain 3', 'plain 4']);
      const effects = await db.pool.query<{ job: number; n: number }>('select job, count(*)::int n from public.effects group by job order by job');
      expect(effects.rows).toEqual([1, 2, 3, 4].map((job) => ({ job, n: 1 })));
      expect(worker.runtimeState().droppedOutcomes).toBe(0);
    } finally {
      await asServerAdmin(`grant workhorse_runtime to ${login.name}`).catch(() => undefined);
      await worker.stop();
      await run;
    }
  }, 60_000);
});

describe('a write refused for longer than a lease', () => {
  it('fails the attempt once one lease window has passed, naming the refusal and what to do, and says so meanwhile (it waited without a word for as long as the heartbeats held the lease)', async () => {
    const errors: unknown[] = [];
    const worker = new Worker(client, { concurrency: 1, pollMs: 50, heartbeatMs: 1_000 });
    worker.events.on('error', (e) => errors.push(e));
    worker.handle(Once, async ({ n }, ctx) => ctx.step('record', () => n));
    // Only the steps' table: heartbeats and settlements go on, so the lease holds.
    await db.pool.query('revoke insert on workhorse.job_steps from workhorse_runtime');
    const { id } = await client.enqueue(Once, { n: 7 });
    const run = worker.run();
    try {
      const job = await waitFor(() => client.getJob(id), (j) => j?.status === 'failed', { what: 'the attempt to fail', timeoutMs: 30_000 });
      expect(job!.lastError).toMatchObject({ name: 'DatabaseUnavailableError' });
      expect(job!.lastError!.message).toMatch(/the database refused a write of its handler for 4000 ms \(.*42501.*\)/);
      // The fault was reported while it was waited out, with what to do.
      expect(errors.some((e) => /42501|permission denied/.test(String((e as Error).message)))).toBe(true);
    } finally {
      await db.pool.query('select workhorse.grant_runtime_v1()').catch(() => undefined);
      await worker.stop();
      await run;
    }
  }, 60_000);
});

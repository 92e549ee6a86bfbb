// `workhorse worker <module>` as a real process with real signals: the
// first SIGTERM (or SIGINT) stops claims, drains the running job and exits
// 0; a second SIGTERM, or the drain deadline, exits at once with a non-zero
// code even while a handler ignores its AbortSignal, and leaves the lease
// for PostgreSQL to recover. The probes answer before, during and after
// the drain: /livez 200 and /readyz 200 while running; /livez 200 and
// /readyz 503 (draining) during the drain; nothing once the process is gone.
// A schema that moves ahead under the running worker ends it with exit 1.
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/index.js';
import { SCHEMA_VERSION } from '../../src/db/schemaVersion.js';
import { SendEmail } from '../fixtures/emailJob.js';
import { createRunLog } from '../fixtures/spawnWorker.js';
import { cliEnv, startCli } from '../cli/support/runCli.js';
import { createEmptyDatabase, createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { sleep, waitFor } from '../helpers/wait.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/workerCliProcess.ts', import.meta.url));

let db: TestDatabase;
let client: Client;
const children: ChildProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  await createRunLog(db.pool);
  client = createClient({ connectionString: db.url, jobs: [SendEmail], poolMax: 2 });
});

afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await db.pool.query('delete from workhorse.job_runtime; delete from workhorse.jobs; delete from workhorse.worker_registry; delete from fx_runs');
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

interface Running {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; at: number }>;
  port: number;
}

async function startWorker(config: Record<string, unknown>): Promise<Running> {
  const child = startCli(['worker', FIXTURE], cliEnv({ FIXTURE_CONFIG: JSON.stringify({ url: db.url, ...config }) }));
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  child.stderr!.on('data', (d) => (out += String(d)));
  const exited = new Promise<{ code: number | null; at: number }>((resolve) => child.on('exit', (code) => resolve({ code, at: Date.now() })));
  const m = await waitFor(
    () => {
      if (child.exitCode !== null) throw new Error(`the worker exited early:\n${out}`);
      return /probes on [^ ]+:(\d+)/.exec(out);
    },
    Boolean,
    { timeoutMs: 30_000, what: 'the probe line' },
  );
  const running = { child, output: () => out, exited, port: Number(m![1]) };
  await waitFor(() => probe(running, '/readyz'), (r) => r.status === 200, { timeoutMs: 30_000, what: 'readiness' });
  return running;
}

async function probe(w: Running, path: string): Promise<{ status: number | 'refused'; body: { status?: string; reason?: string } }> {
  try {
    const res = await fetch(`http://127.0.0.1:${w.port}${path}`);
    return { status: res.status, body: (await res.json()) as { status?: string; reason?: string } };
  } catch {
    return { status: 'refused', body: {} };
  }
}

/** Enqueues one email.send and waits until its handler has started in the child. */
async function runningJob(): Promise<string> {
  const { id } = await client.enqueue(SendEmail, { to: 'ada@example.com' });
  await waitFor(async () => (await db.pool.query('select 1 from fx_runs where job_id = $1', [id])).rowCount, (n) => n === 1, {
    what: 'the handler to start',
  });
  return id;
}

describe('workhorse worker', () => {
  it('drains a running job on the first SIGTERM and exits 0; probes answer before, during and after the drain', async () => {
    const w = await startWorker({ mode: 'work', workMs: 1500 });
    expect(await probe(w, '/livez')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await probe(w, '/readyz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    const id = await runningJob();

    w.child.kill('SIGTERM');
    await waitFor(() => w.output(), (o) => o.includes('SIGTERM: draining'), { what: 'the drain line' });
    // During the drain: alive, not ready.
    expect(await probe(w, '/livez')).toMatchObject({ status: 200 });
    expect(await probe(w, '/readyz')).toMatchObject({ status: 503, body: { status: 'unavailable', reason: 'draining' } });

    const { code } = await w.exited;
    expect(code, w.output()).toBe(0);
    expect(w.output()).toContain('drained; exiting 0');
    const job = await client.getJob(id);
    expect(job).toMatchObject({ status: 'succeeded', result: { deliveredTo: 'ada@example.com' } });
    // The handler ran to its end: the drain did not abort it.
    const run = await db.pool.query<{ ms: number }>(
      'select extract(epoch from j.finished_at - r.started_at) * 1000 as ms from fx_runs r join workhorse.jobs j on j.id = r.job_id where j.id = $1',
      [id],
    );
    expect(Number(run.rows[0]!.ms)).toBeGreaterThanOrEqual(1400);
    expect((await db.pool.query('select 1 from workhorse.worker_registry')).rowCount).toBe(0);
    // After the drain the process is gone and so are its probes.
    expect((await probe(w, '/livez')).status).toBe('refused');
  });

  it('says so and exits 1 when a handler calls process.exit(0) under the running workers (it exited 0 without a word)', async () => {
    const w = await startWorker({ mode: 'exit', workMs: 300 });
    const id = await runningJob();
    const { code } = await w.exited;
    expect(code, w.output()).toBe(1);
    expect(w.output()).toMatch(
      /\[workhorse\] the process is exiting \(code 0\) while its workers run: something called process\.exit\(\) \(a handler\?\); 1 running job\(s\) stay leased until recovery takes them \(a lease after their last heartbeat\); exiting 1 instead of 0/,
    );
    expect((await client.getJob(id))?.status).toBe('running');
  });

  it.each([
    ['escape', /an exception thrown outside any handler's await \(in a timer or an event listener\), its stack below/, 'escaped from the handler'],
    ['rejection', /a rejected promise nobody handled \(one a handler did not await\), its stack below/, 'a rejection nobody awaited'],
  ] as const)('names what ended it when handler code lets an error escape (%s), not process.exit(), and exits 1', async (mode, cause, message) => {
    const w = await startWorker({ mode, workMs: 300 });
    await runningJob();
    const { code } = await w.exited;
    expect(code, w.output()).toBe(1);
    expect(w.output()).toMatch(new RegExp(`\\[workhorse\\] the process is exiting \\(code 1\\) while its workers run: ${cause.source}; 1 running job\\(s\\) stay leased`));
    expect(w.output()).not.toContain('process.exit()');
    expect(w.output()).toContain(message);
  });

  it('drains on SIGHUP as on SIGTERM (a closed terminal or a process manager\'s reload): the running job finishes, exit 0', async () => {
    const w = await startWorker({ mode: 'work', workMs: 1500 });
    const id = await runningJob();
    w.child.kill('SIGHUP');
    await waitFor(() => w.output(), (o) => o.includes('SIGHUP: draining'), { what: 'the drain line' });
    const { code } = await w.exited;
    expect(code, w.output()).toBe(0);
    expect(await client.getJob(id)).toMatchObject({ status: 'succeeded', attempt: 1 });
    expect((await db.pool.query('select 1 from workhorse.worker_registry')).rowCount).toBe(0);
  });

  it('exits 1 when the schema moves ahead under it (a claim finds its function gone), instead of retrying the claim for ever', async () => {
    const w = await startWorker({ mode: 'work', workMs: 100 });
    // Newer code migrated: one more migration recorded, the claim function this code calls gone.
    await db.pool.query(
      `begin; insert into workhorse.migrations (version, name) values (${SCHEMA_VERSION + 1}, 'from_newer_code'); alter function workhorse.claim_many_v1 rename to claim_many_v1_moved; commit`,
    );
    try {
      const exited = await Promise.race([w.exited, sleep(20_000).then(() => undefined)]);
      expect(exited?.code, w.output()).toBe(1);
      expect(w.output()).toMatch(/worker \S+ failed: workhorse schema version \d+ is ahead of this code/);
      expect(w.output()).toContain('stopped after a failure; exiting 1');
    } finally {
      await db.pool.query(
        `begin; delete from workhorse.migrations where version = ${SCHEMA_VERSION + 1}; alter function workhorse.claim_many_v1_moved rename to claim_many_v1; commit`,
      );
    }
  }, 40_000);

  it('exits within 1 s of a second SIGTERM, non-zero, while the handler ignores its signal; the lease is left to recovery', async () => {
    const w = await startWorker({ mode: 'stubborn', workMs: 60_000, heartbeatMs: 500 });
    const id = await runningJob();
    w.child.kill('SIGTERM');
    await waitFor(() => w.output(), (o) => o.includes('SIGTERM: draining'), { what: 'the drain line' });
    await sleep(300);
    expect(w.child.exitCode).toBeNull();
    expect(await probe(w, '/readyz')).toMatchObject({ status: 503 });

    const sentAt = Date.now();
    w.child.kill('SIGTERM');
    const { code, at } = await w.exited;
    expect(at - sentAt).toBeLessThan(1000);
    expect(code).toBe(130);
    expect(w.output()).toContain('second SIGTERM: exiting now (code 130); 1 running job(s) left to recovery once their leases run out');
    // Still leased by the dead process; once the lease (4 x 500 ms) expires, recovery returns the job.
    expect(await client.getJob(id)).toMatchObject({ status: 'running' });
    await sleep(2100);
    await db.pool.query(`select workhorse.recover_expired_v1('default')`);
    expect(await client.getJob(id)).toMatchObject({ status: 'ready', attempt: 1 });
  });

  it('exits at the drain deadline, non-zero, while the handler ignores its signal', async () => {
    const w = await startWorker({ mode: 'stubborn', workMs: 60_000, drainTimeoutMs: 700 });
    await runningJob();
    const sentAt = Date.now();
    w.child.kill('SIGTERM');
    const { code, at } = await w.exited;
    expect(code).toBe(124);
    expect(at - sentAt).toBeGreaterThanOrEqual(650);
    expect(at - sentAt).toBeLessThan(700 + 1000);
    expect(w.output()).toContain('drain deadline (700 ms) passed: exiting now (code 124); 1 running job(s) left to recovery once their leases run out');
  });

  it('exits 1 at once on a database that was never migrated, its probes and pool closed', async () => {
    const empty = await createEmptyDatabase();
    try {
      const child = startCli(['worker', FIXTURE], cliEnv({ FIXTURE_CONFIG: JSON.stringify({ url: empty.url, mode: 'work', workMs: 0 }) }));
      children.push(child);
      let out = '';
      child.stderr!.on('data', (d) => (out += String(d)));
      const started = Date.now();
      const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
      expect(code, out).toBe(1);
      expect(out).toMatch(/workhorse worker: workhorse schema not found: run `workhorse migrate`/);
      // Not kept alive by the probe server or the pool's idle connections.
      expect(Date.now() - started).toBeLessThan(8_000);
    } finally {
      await empty.drop();
    }
  }, 30_000);

  it('drains on SIGINT as on SIGTERM', async () => {
    const w = await startWorker({ mode: 'work', workMs: 0 });
    w.child.kill('SIGINT');
    const { code } = await w.exited;
    expect(code, w.output()).toBe(0);
    expect(w.output()).toMatch(/SIGINT: draining 1 worker\(s\)[^\n]*\n[\s\S]*drained; exiting 0/);
  });
});

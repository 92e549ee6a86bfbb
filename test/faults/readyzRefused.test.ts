// The readiness probe of a worker whose database answers but refuses or
// cancels the worker's own calls. With the runtime role's grants revoked it
// answered 200 (its ping touched no workhorse table) while every claim and
// heartbeat failed with 42501 and the leases were lost; with a role
// statement_timeout the heartbeats could not beat, it answered 200 too. It is
// 503 saying why, and 200 again once the refusal ends.
import { afterAll, beforeAll, expect, it } from 'vitest';
import * as z from 'zod';
import { createWorkhorseAdapter, defineJob } from '../../src/index.js';
import { runWorkerProcess } from '../../src/worker/process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { asServerAdmin, createRuntimeLogin, type RuntimeLogin } from '../helpers/runtimeLogin.js';
import { waitFor } from '../helpers/wait.js';

const Ping = defineJob({ type: 'fx.readyz.refused', schema: z.object({}) });
let db: TestDatabase;
let login: RuntimeLogin;

beforeAll(async () => {
  db = await createTestDatabase();
  login = await createRuntimeLogin(db.url, { prefix: 'wh_readyzrefused' });
});
afterAll(async () => {
  await asServerAdmin(`grant workhorse_runtime to ${login.name}`).catch(() => undefined);
  await db?.drop();
  await login?.drop();
});

async function probe(port: number): Promise<{ status: number; reason?: string }> {
  const res = await fetch(`http://127.0.0.1:${port}/readyz`);
  const body = (await res.json()) as { reason?: string };
  return { status: res.status, ...(body.reason ? { reason: body.reason } : {}) };
}

it('is 503 while the login’s grants are revoked, naming the refusal and the fix, and 200 again once they are back', async () => {
  const running = await runWorkerProcess(
    {
      adapter: () => createWorkhorseAdapter({ connectionString: login.url, jobs: [Ping], poolSize: 2 }),
      probes: { port: 0, host: '127.0.0.1', databaseTimeoutMs: 1_000 },
      workers: [{ options: { heartbeatMs: 500, pollMs: 200, concurrency: 1 }, configure: (w) => void w.handle(Ping, () => undefined) }],
    },
    { log: () => undefined },
  );
  const port = running.probePort!;
  try {
    await waitFor(() => probe(port), (r) => r.status === 200, { what: 'the worker to be ready' });
    await asServerAdmin(`revoke workhorse_runtime from ${login.name}`);
    const refused = await waitFor(() => probe(port), (r) => r.status === 503, { what: '/readyz to be 503', timeoutMs: 10_000 });
    expect(refused.reason).toMatch(/^the database refuses the worker's calls: permission denied .*\(42501\); the database login lacks a privilege|^heartbeats failing for /);
    // Both said in turn: the ping's refusal, and the heartbeats that fail.
    await waitFor(() => probe(port), (r) => /^the database refuses the worker's calls: permission denied/.test(r.reason ?? ''), { what: 'the ping to be refused', timeoutMs: 10_000 });
    await asServerAdmin(`grant workhorse_runtime to ${login.name}`);
    await waitFor(() => probe(port), (r) => r.status === 200, { what: 'the worker to be ready again', timeoutMs: 15_000 });
  } finally {
    running.shutdown('test');
    await running.done;
  }
}, 60_000);

it('is 503 while its heartbeats fail though the server answers pings', async () => {
  const running = await runWorkerProcess(
    {
      adapter: () => createWorkhorseAdapter({ connectionString: login.url, jobs: [Ping], poolSize: 2 }),
      probes: { port: 0, host: '127.0.0.1', databaseTimeoutMs: 1_000 },
      workers: [{ options: { workerId: 'beats-blocked', heartbeatMs: 500, pollMs: 200, concurrency: 1 }, configure: (w) => void w.handle(Ping, () => undefined) }],
    },
    { log: () => undefined },
  );
  const port = running.probePort!;
  const holder = await db.pool.connect();
  try {
    await waitFor(() => probe(port), (r) => r.status === 200, { what: 'the worker to be ready' });
    // The heartbeat updates the worker's registry row: a lock on it holds every beat past its bound, while a ping
    // (which reads, and takes no row lock) still answers.
    await holder.query('begin');
    await holder.query('lock table workhorse.worker_registry in exclusive mode');
    const failing = await waitFor(() => probe(port), (r) => r.status === 503, { what: '/readyz to be 503', timeoutMs: 10_000 });
    expect(failing.reason).toMatch(/^heartbeats failing for \d+\.\d s: beats-blocked \(the worker's log says why\)$/);
    await holder.query('rollback');
    await waitFor(() => probe(port), (r) => r.status === 200, { what: 'the worker to be ready again', timeoutMs: 15_000 });
  } finally {
    holder.release();
    running.shutdown('test');
    await running.done;
  }
}, 60_000);

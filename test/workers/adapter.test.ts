// createWorkhorseAdapter owns a worker process's database resources, and
// defineWorkerProcess checks its definition up front: bad options are a
// ConfigError naming the key, never a crash later. The older `client:` form
// still runs. Probes answer only their two paths, GET only.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, createClient, createWorkhorseAdapter, defineWorkerProcess, runWorkerProcess } from '../../src/index.js';
import { SendEmail } from '../fixtures/emailJob.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.drop();
});

function configIssues(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.issues.map((i) => i.path.join('.'));
    throw err;
  }
  throw new Error('accepted');
}

const worker = { options: { queues: ['email'] }, configure: () => undefined };

describe('createWorkhorseAdapter', () => {
  it('makes a pool from a connection string, answers a ping and closes what it made', async () => {
    const adapter = createWorkhorseAdapter({ connectionString: db.url, namespace: 'adapter_ns', poolSize: 2, jobs: [SendEmail] });
    expect(adapter.namespace).toBe('adapter_ns');
    expect(adapter.client.pool.options.max).toBe(2);
    await adapter.ping();
    await adapter.close();
    expect(adapter.client.pool.ending).toBe(true);
  });

  it('borrows a pool without closing it', async () => {
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    const adapter = createWorkhorseAdapter({ pool });
    await adapter.ping();
    await adapter.close();
    expect((await pool.query<{ one: number }>('select 1 as one')).rows[0]!.one).toBe(1);
    await pool.end();
  });

  it('refuses both or neither of connectionString and pool, a bad Redis URL, an unknown key', () => {
    const pool = new pg.Pool({ connectionString: db.url });
    expect(configIssues(() => createWorkhorseAdapter({ connectionString: db.url, pool }))).toEqual(['connectionString']);
    expect(configIssues(() => createWorkhorseAdapter({}))).toEqual(['connectionString']);
    expect(configIssues(() => createWorkhorseAdapter({ connectionString: db.url, redisUrl: 'localhost:6379' }))).toEqual(['redisUrl']);
    expect(configIssues(() => createWorkhorseAdapter({ connectionString: db.url, poolsize: 3 } as never))).toEqual(['']);
    void pool.end();
  });
});

describe('defineWorkerProcess', () => {
  it('refuses a definition without an adapter, with both forms, without workers, with a bad probe port or a drain deadline under 500 ms', () => {
    const adapter = () => createWorkhorseAdapter({ connectionString: db.url });
    expect(configIssues(() => defineWorkerProcess({ workers: [worker] }))).toEqual(['adapter']);
    expect(configIssues(() => defineWorkerProcess({ adapter, client: () => createClient({ connectionString: db.url }), workers: [worker] }))).toEqual(['adapter']);
    expect(configIssues(() => defineWorkerProcess({ adapter, workers: [] }))).toEqual(['workers']);
    expect(configIssues(() => defineWorkerProcess({ adapter, workers: [worker], probes: { port: 70_000 } }))).toEqual(['probes.port']);
    // The deadline holds the deregistration and the close too: under 500 ms an idle worker exited 124, its row left draining.
    expect(configIssues(() => defineWorkerProcess({ adapter, workers: [worker], drainTimeoutMs: 0 }))).toEqual(['drainTimeoutMs']);
    expect(() => defineWorkerProcess({ adapter, workers: [worker], drainTimeoutMs: 1 })).toThrow(/drainTimeoutMs: at least 500 ms: the drain deadline also holds the worker's deregistration/);
  });

  it("checks each worker's options when it is defined, not when the process starts", () => {
    const adapter = () => createWorkhorseAdapter({ connectionString: db.url });
    const configure = () => undefined;
    expect(configIssues(() => defineWorkerProcess({ adapter, workers: [{ options: { concurrency: 0 }, configure }] }))).toEqual(['workers.0.options.concurrency']);
    expect(configIssues(() => defineWorkerProcess({ adapter, workers: [{ configure }, { options: { concurency: 5 } as never, configure }] }))).toEqual(['workers.1.options']);
  });

  it('still runs the client: form, and its probes answer only GET on their two paths', async () => {
    const def = defineWorkerProcess({
      client: () => createClient({ connectionString: db.url, jobs: [SendEmail], poolMax: 2 }),
      probes: { port: 0, host: '127.0.0.1', livenessPath: '/alive', readinessPath: '/ready' },
      workers: [{ options: { queues: ['email'] }, configure: (w) => void w.handle(SendEmail, (p) => ({ deliveredTo: p.to })) }],
    });
    const proc = await runWorkerProcess(def, { log: () => undefined });
    const url = (path: string) => `http://127.0.0.1:${proc.probePort}${path}`;
    try {
      await waitFor(async () => (await fetch(url('/ready'))).status, (s) => s === 200, { what: 'readiness' });
      expect((await fetch(url('/alive'))).status).toBe(200);
      expect((await fetch(url('/livez'))).status).toBe(404);
      expect((await fetch(url('/alive'), { method: 'POST' })).status).toBe(405);
      const body = (await (await fetch(url('/ready'))).json()) as { workers: { registered: boolean }[] };
      expect(body.workers).toEqual([expect.objectContaining({ registered: true, running: true })]);
    } finally {
      proc.shutdown();
      expect(await proc.done).toBe('drained');
    }
  });

  it("closes its probes and reports failed when the adapter's close throws", async () => {
    const lines: string[] = [];
    const def = defineWorkerProcess({
      adapter: () => {
        const real = createWorkhorseAdapter({ connectionString: db.url, poolSize: 2, jobs: [SendEmail] });
        return Object.assign(Object.create(real) as typeof real, {
          close: async () => {
            await real.close();
            throw new Error('close exploded');
          },
        });
      },
      probes: { port: 0, host: '127.0.0.1' },
      workers: [{ options: { queues: ['email'] }, configure: (w) => void w.handle(SendEmail, (p) => ({ deliveredTo: p.to })) }],
    });
    const proc = await runWorkerProcess(def, { log: (l) => lines.push(l) });
    const url = `http://127.0.0.1:${proc.probePort}/livez`;
    await waitFor(async () => (await fetch(url)).status, (s) => s === 200, { what: 'liveness' });
    proc.shutdown();
    expect(await proc.done).toBe('failed');
    expect(lines.some((l) => l.includes('close exploded'))).toBe(true);
    await expect(fetch(url)).rejects.toThrow();
  });
});

describe('runWorkerProcess in a process the caller owns (no exit function)', () => {
  it('says a second signal stops the workers at once, aborting and retrying the running jobs, not that it exits', async () => {
    const client = createClient({ connectionString: db.url, jobs: [SendEmail], poolMax: 2 });
    let started = false;
    const def = defineWorkerProcess({
      client: () => createClient({ connectionString: db.url, jobs: [SendEmail], poolMax: 3 }),
      workers: [
        {
          options: { queues: ['email'], heartbeatMs: 500 },
          configure: (w) =>
            w.handle(SendEmail, async (_p, ctx) => {
              started = true;
              await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
              throw ctx.signal.reason;
            }),
        },
      ],
    });
    const logs: string[] = [];
    const proc = await runWorkerProcess(def, { log: (l) => logs.push(l) });
    try {
      const { id } = await client.enqueue(SendEmail, { to: 'ada@example.com' });
      await waitFor(() => started, Boolean, { what: 'the handler to start' });
      proc.shutdown('SIGTERM');
      proc.shutdown('SIGTERM');
      expect(await proc.done).toBe('hard');
      expect(logs).toContain('[workhorse] second SIGTERM: stopping the workers at once; 1 running job(s) are aborted and retried');
      expect(logs.join('\n')).not.toContain('exiting now');
      await waitFor(() => client.getJob(id), (j) => j?.status === 'ready', { what: 'the job to be set to retry' });
    } finally {
      await client.close();
    }
  });
});

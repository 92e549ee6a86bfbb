// The Workers page's examples, pasted as written (imports and the stand-ins
// they assume aside: `queue` is the client, `mailer` a fake mail provider,
// `adapterOptions` points at the test database). Each runs against real
// PostgreSQL and checks what the page says it does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createClient,
  createWorkhorseAdapter,
  defineWorkerProcess,
  runWorkerProcess,
  Worker,
  type Client,
  type HandlerContext,
} from '../../src/index.js';
import { SendEmail } from '../fixtures/emailJob.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

let db: TestDatabase;
let queue: Client;

/** The page's mail provider: records each send and honours the signal. */
const mailer = {
  sent: [] as string[],
  async send(to: string, options: { signal: AbortSignal }): Promise<void> {
    options.signal.throwIfAborted();
    this.sent.push(to);
  },
};

beforeAll(async () => {
  db = await createTestDatabase();
  queue = createClient({ connectionString: db.url, jobs: [SendEmail], poolMax: 4 });
});

afterAll(async () => {
  await queue?.close();
  await db?.drop();
});

const succeeded = (id: string) =>
  waitFor(
    () => queue.getJob(id),
    (j) => j?.status === 'succeeded',
    { what: `job ${id} to succeed` },
  );

describe('the Workers page', () => {
  it('"Register handlers and run": the handler returns { deliveredTo }, the durable outcome', async () => {
    const { id } = await queue.enqueue('email.send', { to: 'ada@example.com' });
    const stopWhenDone = succeeded(id);

    // --- as on the page ---
    const worker = new Worker(queue, { queues: ["email", "billing"], concurrency: 5 });
    worker.handle("email.send", async (payload: { to: string }, ctx) => {
      await mailer.send(payload.to, { signal: ctx.signal });
      return { deliveredTo: payload.to };
    });
    void stopWhenDone.then(() => worker.stop());
    await worker.run();
    // --- end ---

    expect(await queue.getJob(id)).toMatchObject({ status: 'succeeded', result: { deliveredTo: 'ada@example.com' } });
    expect(mailer.sent).toContain('ada@example.com');
    expect(worker.options).toMatchObject({ queues: ['email', 'billing'], concurrency: 5 });
  });

  it('"The options that matter": leaseMs 30 s is how long a claim owns a job; the heartbeat is a third of it', async () => {
    // --- as on the page ---
    const worker = new Worker(queue, {
      queues: ["email", "billing"], concurrency: 5, leaseMs: 30_000,
      workerId: "email-worker-1",
    });
    // --- end ---
    expect(worker.workerId).toBe('email-worker-1');
    expect(worker.options).toMatchObject({ leaseMs: 30_000, heartbeatMs: 10_000 });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    worker.handle(SendEmail, async (payload) => {
      await held;
      return { deliveredTo: payload.to };
    });
    void worker.run();
    try {
      const { id } = await queue.enqueue(SendEmail, { to: 'grace@example.com' });
      const lease = await waitFor(
        async () =>
          (
            await db.pool.query<{ worker_id: string; ms: number }>(
              `select worker_id, extract(epoch from expires_at - claimed_at) * 1000 as ms from workhorse.job_runtime where job_id = $1`,
              [id],
            )
          ).rows[0],
        Boolean,
        { what: 'the lease row' },
      );
      expect(lease!.worker_id).toBe('email-worker-1');
      expect(Number(lease!.ms)).toBeGreaterThan(29_000);
      expect(Number(lease!.ms)).toBeLessThanOrEqual(30_100);
      // The registry stores the heartbeat; dead after seven of them.
      const row = await db.pool.query<{ heartbeat_ms: number }>(`select heartbeat_ms from workhorse.worker_registry where id = 'email-worker-1'`);
      expect(row.rows[0]!.heartbeat_ms).toBe(10_000);
      release();
      await succeeded(id);
    } finally {
      release();
      await worker.stop();
    }
  });

  it('"Run workers in a dedicated process": defineWorkerProcess with createWorkhorseAdapter runs the worker and drains', async () => {
    const adapterOptions = { connectionString: db.url, jobs: [SendEmail], poolSize: 3 };
    const sendEmail = async (payload: { to: string }, ctx: HandlerContext) => {
      await mailer.send(payload.to, { signal: ctx.signal });
      return { deliveredTo: payload.to };
    };

    // --- as on the page (the module's default export) ---
    const definition = defineWorkerProcess({
      adapter: () => createWorkhorseAdapter(adapterOptions),
      workers: [{
        options: { queues: ["email", "billing"], concurrency: 5 },
        configure(worker) { worker.handle("email.send", sendEmail); },
      }],
    });
    // --- end ---

    const logs: string[] = [];
    const proc = await runWorkerProcess(definition, { log: (l) => logs.push(l) });
    const { id } = await queue.enqueue(SendEmail, { to: 'linus@example.com' });
    await succeeded(id);
    expect(await queue.getJob(id)).toMatchObject({ result: { deliveredTo: 'linus@example.com' } });
    proc.shutdown('SIGTERM');
    expect(await proc.done).toBe('drained');
    expect(logs.join('\n')).toContain('SIGTERM: draining 1 worker(s)');
    expect((await db.pool.query('select 1 from workhorse.worker_registry')).rowCount).toBe(0);
  });

  it('"Pause, stop, and drain": pause/resume/isPaused locally; an operator pause a local resume cannot clear', async () => {
    const worker = new Worker(queue, { queues: ['email'], registryIntervalMs: 50 });
    worker.handle(SendEmail, async (p) => ({ deliveredTo: p.to }));
    void worker.run();
    try {
      await waitFor(() => worker.runtimeState().registered, Boolean, { what: 'registration' });
      worker.pause();
      expect(worker.isPaused()).toBe(true);
      worker.resume();
      expect(worker.isPaused()).toBe(false);

      await queue.admin.setWorkerPaused(worker.workerId, true);
      await waitFor(() => worker.isPaused(), Boolean, { what: 'the operator pause' });
      worker.resume();
      expect(worker.isPaused()).toBe(true);
      expect(worker.runtimeState()).toMatchObject({ operatorPaused: true, localPaused: false });
      await queue.admin.setWorkerPaused(worker.workerId, false);
      await waitFor(() => worker.isPaused(), (p) => !p, { what: 'the operator resume' });
    } finally {
      await worker.stop();
    }
    expect(worker.runtimeState()).toMatchObject({ registered: false, running: false });
  });

  it('"runOnce performs a single claim-and-run pass and returns whether it found work"', async () => {
    const worker = new Worker(queue, { queues: ['email'], listen: false });
    worker.handle(SendEmail, async (p) => ({ deliveredTo: p.to }));
    try {
      expect(await worker.runOnce()).toBe(false);
      const { id } = await queue.enqueue(SendEmail, { to: 'edsger@example.com' });
      expect(await worker.runOnce()).toBe(true);
      expect(await queue.getJob(id)).toMatchObject({ status: 'succeeded', result: { deliveredTo: 'edsger@example.com' } });
    } finally {
      await worker.stop();
    }
  });
});

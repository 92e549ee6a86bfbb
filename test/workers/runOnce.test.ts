// A Worker runs once. run() after stop() (whether it ran or not) is a
// ConfigError saying so: it used to register again and heartbeat as an
// active worker that never claimed (stop() had closed its claims), and its
// run() never settled. A second run() while it runs is the same run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, createClient, defineJob, Worker, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const Ping = defineJob({ type: 'once.ping', schema: z.object({}) });
let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Ping] });
});
afterAll(async () => {
  await client?.close();
  await db?.drop();
});

const registered = async () => (await db.pool.query<{ n: number }>('select count(*)::int n from workhorse.worker_registry')).rows[0]!.n;

describe('Worker.run', () => {
  it('is the same run when called again while running, and a ConfigError once stopped; nothing registers again', async () => {
    const worker = new Worker(client, { pollMs: 50 });
    worker.handle(Ping, () => 'pong');
    const run = worker.run();
    expect(worker.run()).toBe(run);
    await worker.stop();
    await run;
    expect(await registered()).toBe(0);
    const again = await worker.run().catch((e: unknown) => e);
    expect(again).toBeInstanceOf(ConfigError);
    expect((again as Error).message).toMatch(/a Worker runs once: create another/);
    expect(await registered()).toBe(0);
  });

  it('is a ConfigError after a stop() that came before any run', async () => {
    const worker = new Worker(client, { pollMs: 50 });
    worker.handle(Ping, () => 'pong');
    await worker.stop();
    await expect(worker.run()).rejects.toBeInstanceOf(ConfigError);
    expect(await registered()).toBe(0);
  });

  it('stops the worker when given a signal aborted already: run() and runOnce() after it are ConfigErrors, and the job stays ready', async () => {
    const worker = new Worker(client, { pollMs: 50 });
    worker.handle(Ping, () => 'pong');
    const ac = new AbortController();
    ac.abort();
    await worker.run(ac.signal);
    const { id } = await client.enqueue(Ping, {});
    await expect(worker.runOnce()).rejects.toThrow(/a Worker runs once: create another/);
    await expect(worker.run()).rejects.toBeInstanceOf(ConfigError);
    expect(await registered()).toBe(0);
    expect((await client.getJob(id))?.status).toBe('ready');
    await client.cancel(id);
  });
});

describe('Worker.runOnce', () => {
  it('is a ConfigError once stopped, as run() is: it registered again and left a heartbeat running with no claim ever made', async () => {
    const worker = new Worker(client, { pollMs: 50, heartbeatMs: 200 });
    worker.handle(Ping, () => 'pong');
    await client.enqueue(Ping, {});
    expect(await worker.runOnce()).toBe(true);
    await worker.stop();
    expect(await registered()).toBe(0);
    const again = await worker.runOnce().catch((e: unknown) => e);
    expect(again).toBeInstanceOf(ConfigError);
    expect((again as Error).message).toMatch(/a Worker runs once: create another/);
    // No registry row, then or a few heartbeats later.
    await new Promise((r) => setTimeout(r, 500));
    expect(await registered()).toBe(0);
  });
});

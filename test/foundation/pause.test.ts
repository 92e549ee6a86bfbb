// Foundation (7): a paused queue is not claimed by anyone until resumed; an
// operator-paused worker stops claiming after its next heartbeat and claims
// again once unpaused.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { sleep, waitFor } from '../helpers/wait.js';
import { jobRow } from './support/rows.js';

const Ping = defineJob({ type: 'fx.ping', schema: z.object({ n: z.number() }) });
const HEARTBEAT_MS = 100;

let db: TestDatabase;
let client: Client;
const workers: Worker[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Ping], poolMax: 4 });
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

describe('pausing', () => {
  it('does not claim from a paused queue, and claims again once it is resumed', async () => {
    await client.admin.pauseQueue('default');
    const { id } = await client.enqueue(Ping, { n: 1 });
    const w = new Worker(client, { workerId: 'q-pause', listen: false, heartbeatMs: 60_000 }).handle(Ping, () => 'pong');
    workers.push(w);

    expect(await w.runOnce()).toBe(false);
    expect(await jobRow(db.pool, id)).toMatchObject({ status: 'ready', attempt: 0 });
    expect((await client.admin.listQueues()).find((q) => q.name === 'default')).toMatchObject({ paused: true, ready: 1 });

    await client.admin.resumeQueue('default');
    expect(await w.runOnce()).toBe(true);
    expect(await jobRow(db.pool, id)).toMatchObject({ status: 'succeeded', result: 'pong' });
  });

  it('stops an operator-paused worker claiming after its next heartbeat and resumes it when unpaused', async () => {
    const w = new Worker(client, { workerId: 'op-pause', heartbeatMs: HEARTBEAT_MS, pollMs: 20 }).handle(Ping, () => 'pong');
    workers.push(w);
    void w.run();
    await waitFor(() => w.runtimeState().registered, Boolean, { what: 'registration' });

    await client.admin.setWorkerPaused('op-pause', true);
    await waitFor(() => w.isPaused(), Boolean, { what: 'the pause to reach the worker' });
    expect(w.runtimeState()).toMatchObject({ operatorPaused: true, localPaused: false });
    expect((await client.admin.listWorkers())[0]).toMatchObject({ id: 'op-pause', operatorPaused: true });

    const { id } = await client.enqueue(Ping, { n: 2 });
    // Several heartbeats and polls later the job is still untouched.
    await sleep(5 * HEARTBEAT_MS);
    expect(await jobRow(db.pool, id)).toMatchObject({ status: 'ready', attempt: 0 });

    await client.admin.setWorkerPaused('op-pause', false);
    await waitFor(() => jobRow(db.pool, id), (j) => j.status === 'succeeded', { what: 'the job to run after unpausing' });
    expect(w.isPaused()).toBe(false);
  });

  it('answers an operator pause for an unknown worker with NotFoundError', async () => {
    await expect(client.admin.setWorkerPaused('no-such-worker', true)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('stops a locally paused worker claiming until resume()', async () => {
    const w = new Worker(client, { workerId: 'local-pause', heartbeatMs: HEARTBEAT_MS, pollMs: 20 }).handle(Ping, () => 'pong');
    workers.push(w);
    w.pause();
    void w.run();
    const { id } = await client.enqueue(Ping, { n: 3 });
    await sleep(5 * HEARTBEAT_MS);
    expect(await jobRow(db.pool, id)).toMatchObject({ status: 'ready' });
    w.resume();
    await waitFor(() => jobRow(db.pool, id), (j) => j.status === 'succeeded', { what: 'the job to run after resume()' });
  });
});

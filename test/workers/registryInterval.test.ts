// The registry refresh runs on its own interval (registryIntervalMs), not
// the heartbeat's: an operator pause reaches a worker whose heartbeat is a
// minute away within that interval. A failing refresh (the database
// function raising, here) never stops dispatch: running jobs finish, new
// ones are claimed, and the worker keeps its last remote-pause decision
// until a refresh succeeds. A failed first registration does not reject
// run(): it is retried until it succeeds.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, Worker, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { sleep, waitFor } from '../helpers/wait.js';

const Hold = defineJob({ type: 'reg.hold', schema: z.object({ ms: z.number() }) });
const INTERVAL_MS = 150;
/** A heartbeat this long never fires during a test: only the registry refresh can carry the pause. */
const HEARTBEAT_MS = 120_000;

let db: TestDatabase;
let client: Client;
const workers: Worker[] = [];
const restores: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Hold], poolMax: 6 });
});

afterEach(async () => {
  for (const sql of restores.splice(0)) await db.pool.query(sql);
  await Promise.all(workers.splice(0).map((w) => w.stop()));
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

/** Makes a protocol function raise until the returned restore runs (real PostgreSQL errors, no mock). */
async function breakFunction(signature: string, args: string, returns: string): Promise<() => Promise<void>> {
  const def = await db.pool.query<{ sql: string }>(`select pg_get_functiondef($1::regprocedure) as sql`, [signature]);
  const original = def.rows[0]!.sql;
  restores.push(original);
  await db.pool.query(
    `create or replace function ${signature.split('(')[0]}(${args}) returns ${returns} language plpgsql as $$ begin raise exception 'registry is broken for this test'; end $$`,
  );
  return async () => {
    restores.splice(restores.indexOf(original), 1);
    await db.pool.query(original);
  };
}

function startWorker(id: string, errors: unknown[] = []): { w: Worker; running: Promise<void> } {
  const w = new Worker(client, { workerId: id, heartbeatMs: HEARTBEAT_MS, registryIntervalMs: INTERVAL_MS, pollMs: 50, concurrency: 4 });
  w.handle(Hold, async ({ ms }) => {
    await sleep(ms);
    return { held: ms };
  });
  w.events.on('error', (e) => errors.push(e));
  workers.push(w);
  return { w, running: w.run() };
}

describe('the registry interval', () => {
  it('brings an operator pause to a worker within registryIntervalMs, a heartbeat minutes away', async () => {
    const { w } = startWorker('reg-pause');
    await waitFor(() => w.runtimeState().registered, Boolean, { what: 'registration' });
    const pausedAt = Date.now();
    await client.admin.setWorkerPaused('reg-pause', true);
    await waitFor(() => w.isPaused(), Boolean, { timeoutMs: 5_000, what: 'the operator pause' });
    expect(Date.now() - pausedAt).toBeLessThan(INTERVAL_MS * 4);
    const { id } = await client.enqueue(Hold, { ms: 0 });
    await sleep(INTERVAL_MS * 3);
    expect((await client.getJob(id))?.status).toBe('ready');
    await client.admin.setWorkerPaused('reg-pause', false);
    await waitFor(() => client.getJob(id), (j) => j?.status === 'succeeded', { what: 'the job after the resume' });
  });

  it('keeps dispatching through failed refreshes and keeps the last pause decision until one succeeds', async () => {
    const errors: unknown[] = [];
    const { w } = startWorker('reg-broken', errors);
    await waitFor(() => w.runtimeState().registered, Boolean, { what: 'registration' });
    const long = await client.enqueue(Hold, { ms: 1200 });
    await waitFor(() => client.getJob(long.id), (j) => j?.status === 'running', { what: 'the long job to start' });

    const restore = await breakFunction('workhorse.refresh_worker_v1(text,text,integer)', 'p_namespace text, p_worker_id text, p_active integer', 'table (registered boolean, paused boolean, peers integer)');
    await waitFor(() => errors.length, (n) => n > 0, { what: 'a failed refresh to be reported' });
    expect(String(errors[0])).toMatch(/registry is broken/);

    // The running job finishes and new jobs are claimed and run.
    const more = await client.enqueue(Hold, { ms: 10 });
    await waitFor(() => client.getJob(more.id), (j) => j?.status === 'succeeded', { what: 'a job claimed while refreshes fail' });
    await waitFor(() => client.getJob(long.id), (j) => j?.status === 'succeeded', { what: 'the running job to finish' });

    // An operator pause cannot arrive while refreshes fail: the last decision (running) stands.
    await client.admin.setWorkerPaused('reg-broken', true);
    await sleep(INTERVAL_MS * 4);
    expect(w.isPaused()).toBe(false);
    await restore();
    await waitFor(() => w.isPaused(), Boolean, { what: 'the pause once refreshes succeed' });

    // And the other way round: paused stays paused while refreshes fail.
    const restoreAgain = await breakFunction('workhorse.refresh_worker_v1(text,text,integer)', 'p_namespace text, p_worker_id text, p_active integer', 'table (registered boolean, paused boolean, peers integer)');
    await client.admin.setWorkerPaused('reg-broken', false);
    await sleep(INTERVAL_MS * 4);
    expect(w.isPaused()).toBe(true);
    await restoreAgain();
    await waitFor(() => w.isPaused(), (p) => !p, { what: 'the resume once refreshes succeed' });
  });

  it('does not reject run() when the first registration fails: it retries until it registers', async () => {
    const restore = await breakFunction(
      'workhorse.register_worker_v1(text,text,text,text,text[],text[],integer,integer,timestamptz)',
      'p_namespace text, p_worker_id text, p_build text, p_kind text, p_queues text[], p_types text[], p_concurrency integer, p_heartbeat_ms integer, p_deadline timestamptz default null',
      'timestamptz',
    );
    const errors: unknown[] = [];
    const { w, running } = startWorker('reg-first', errors);
    let rejected: unknown;
    void running.catch((e: unknown) => (rejected = e));
    await waitFor(() => errors.length, (n) => n >= 1, { what: 'the failed registration to be reported' });
    expect(w.runtimeState().registered).toBe(false);
    await restore();
    const { id } = await client.enqueue(Hold, { ms: 0 });
    await waitFor(() => client.getJob(id), (j) => j?.status === 'succeeded', { timeoutMs: 20_000, what: 'the job once registration succeeds' });
    expect(w.runtimeState().registered).toBe(true);
    expect(rejected).toBeUndefined();
  });
});

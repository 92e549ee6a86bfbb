// An app's jobs are every type it enqueues or handles. A handler its
// configure bound for a type outside them was accepted without a word, and
// a definition on a queue of its own then never ran: a tick (and an
// appWorker) claims from the app's jobs' queues only. It is a ConfigError
// naming the type, in a tick and in a worker process, before anything runs.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { defineApp } from '../../src/app/defineApp.js';
import { appWorker, ConfigError, createClient, defineJob, defineWorkerProcess, runWorkerProcess } from '../../src/index.js';
import { runTick } from '../../src/tick/runTick.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const Listed = defineJob({ type: 'outside.listed', schema: z.object({}) });
const Forgotten = defineJob({ type: 'outside.forgotten', queue: 'reports', schema: z.object({}) });
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const app = defineApp({
  jobs: [Listed],
  configure(w) {
    w.handle(Listed, async () => 'ok');
    w.handle(Forgotten, async () => 'never claimed');
  },
});

it('fails a tick with a ConfigError naming the type, having claimed nothing', async () => {
  const client = createClient({ connectionString: db.url, jobs: [Listed, Forgotten] });
  try {
    const { id } = await client.enqueue(Listed, {});
    const err = await runTick({ app, connectionString: db.url, deadline: new Date(Date.now() + 5000), scheduleNamespaces: [] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toBe(
      `app: configure binds a handler for "outside.forgotten", which is not one of the app's jobs: add its defineJob() value to defineApp({ jobs }) (the app's queues, its client's validation and the HTTP API come from jobs)`,
    );
    expect((await client.getJob(id))?.status).toBe('ready');
  } finally {
    await client.close();
  }
});

it('fails a worker process running the app with appWorker the same way', async () => {
  const client = createClient({ connectionString: db.url, jobs: [Listed] });
  try {
    const outcome = await runWorkerProcess(defineWorkerProcess({ client: () => client, workers: [appWorker(app, { listen: false })] }), {
      log: () => undefined,
    }).then(
      async (p) => p.done,
      (e: unknown) => e,
    );
    expect(outcome).toBeInstanceOf(ConfigError);
    expect((outcome as Error).message).toMatch(/configure binds a handler for "outside.forgotten", which is not one of the app's jobs/);
  } finally {
    await client.close();
  }
});

it('accepts an app whose handlers are all among its jobs', async () => {
  const whole = defineApp({ jobs: [Listed, Forgotten], configure: app.configure });
  const client = createClient({ connectionString: db.url, jobs: [Listed, Forgotten] });
  try {
    const { id } = await client.enqueue(Forgotten, {});
    await runTick({ app: whole, connectionString: db.url, deadline: new Date(Date.now() + 5000), scheduleNamespaces: [] });
    expect(await client.getJob(id)).toMatchObject({ status: 'succeeded', result: 'never claimed' });
  } finally {
    await client.close();
  }
});

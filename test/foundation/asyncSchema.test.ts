// workhorse parses payloads with safeParse, which cannot run a schema with an
// async refine or transform: zod throws "Encountered Promise during
// synchronous parse". That error came out of enqueue untyped (over HTTP a
// 500), and a worker whose definition had such a schema failed every attempt
// of every job with it, retried. It is a ConfigError naming what was being
// parsed now, and a job it meets fails at once. Over HTTP it is a 500 that
// says what is wrong with the server's app (not "internal error"), logged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, createClient, defineApp, defineJob, Worker, type Client } from '../../src/index.js';
import { createApp } from '../../src/http/createApp.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const retry = { maxAttempts: 3, backoff: { kind: 'fixed' as const, baseMs: 0, maxMs: 0 } };
const Sync = defineJob({ type: 'lookup.user', schema: z.object({ id: z.string() }), retry });
const Async = defineJob({ type: 'lookup.user', schema: z.object({ id: z.string().refine(async (id) => id.length > 0) }), retry });

let db: TestDatabase;
let enqueuer: Client;
let handler: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  enqueuer = createClient({ connectionString: db.url, jobs: [Sync], poolMax: 2 });
  handler = createClient({ connectionString: db.url, jobs: [Async], poolMax: 2 });
});
afterAll(async () => {
  await enqueuer.close();
  await handler.close();
  await db.drop();
});

describe('a job schema with an async refinement', () => {
  it('is a ConfigError from enqueue, and nothing is written', async () => {
    const err = await handler.enqueue(Async, { id: 'u1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).toMatch(/cannot parse payload for job type "lookup.user": the schema is asynchronous/);
    expect((await db.pool.query('select count(*)::int as n from workhorse.jobs')).rows[0].n).toBe(0);
  });

  it('over HTTP, POST /jobs answers a 500 naming the schema, logs it, and writes nothing', async () => {
    const logged: string[] = [];
    const app = createApp({
      client: handler,
      app: defineApp({ jobs: [Async], configure: (w) => w.handle(Async, async () => 'ran') }),
      apiToken: 'async-schema-token-0123456789',
      signingSecrets: ['s'.repeat(32)],
      tick: async () => {
        throw new Error('no tick in this test');
      },
      log: (message) => void logged.push(message),
    });
    const res = await app.request('/jobs', {
      method: 'POST',
      body: JSON.stringify({ type: 'lookup.user', payload: { id: 'u1' } }),
      headers: { authorization: 'Bearer async-schema-token-0123456789', 'content-type': 'application/json' },
    });
    expect(res.status).toBe(500);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('config_invalid');
    expect(body.error.message).toMatch(/cannot parse payload for job type "lookup.user": the schema is asynchronous/);
    expect(logged).toEqual([expect.stringMatching(/POST \/jobs: the server's configuration is invalid/)]);
    expect((await db.pool.query('select count(*)::int as n from workhorse.jobs')).rows[0].n).toBe(0);
  });

  it('fails a job a worker parses with it at once, with the ConfigError', async () => {
    const { id } = await enqueuer.enqueue(Sync, { id: 'u1' });
    const worker = new Worker(handler, { pollMs: 50 }).handle(Async, async () => 'ran');
    const run = worker.run();
    const job = await waitFor(() => enqueuer.getJob(id), (j) => j?.status === 'failed' || j?.status === 'succeeded', { what: 'the job to settle' });
    await worker.stop();
    await run;
    expect(job).toMatchObject({ status: 'failed', attempt: 1, lastError: { name: 'ConfigError', code: 'config_invalid' } });
    expect((job!.lastError as { message: string }).message).toMatch(/the schema is asynchronous/);
  });
});

// POST /jobs names the field of a payload its schema cannot read back from
// the stored JSON (a transform whose output the schema does not take) with
// the path relative to the body, as for every other payload issue:
// ["payload", "s"] for one job, ["jobs", i, "payload", "s"] in a batch,
// not a bare [] from the client's own check.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { defineApp } from '../../src/app/defineApp.js';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { createApp } from '../../src/http/createApp.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { startServer } from './support/server.js';

const TOKEN = 'stored-payload-token-0123456789';
const Length = defineJob({ type: 'spp.length', schema: z.object({ s: z.string().transform((s) => s.length) }) });
const Plain = defineJob({ type: 'spp.plain', schema: z.object({ s: z.string() }) });
const app = defineApp({ jobs: [Length, Plain], configure: () => undefined });

let db: TestDatabase;
let client: Client;
let server: Awaited<ReturnType<typeof startServer>>;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, namespace: 'stored-paths', jobs: app.jobs });
  server = await startServer(createApp({ client, app, apiToken: TOKEN, tick: async () => { throw new Error('no tick'); }, log: () => undefined }));
});

afterAll(async () => {
  await server?.close();
  await client?.close();
  await db?.drop();
});

async function post(body: unknown): Promise<{ status: number; body: { error: { code: string; issues: { path: unknown[] }[] } } }> {
  const res = await fetch(`${server.url}/jobs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as never };
}

it('one job: 400 naming ["payload", "s"]', async () => {
  const r = await post({ type: 'spp.length', payload: { s: 'hello' } });
  expect(r.status).toBe(400);
  expect(r.body.error.code).toBe('validation_failed');
  expect(r.body.error.issues.map((i) => i.path)).toEqual([['payload', 's']]);
});

it('a batch: 400 naming ["jobs", 1, "payload", "s"], and nothing is written', async () => {
  const r = await post({ jobs: [{ type: 'spp.plain', payload: { s: 'ok' } }, { type: 'spp.length', payload: { s: 'hello' } }] });
  expect(r.status).toBe(400);
  expect(r.body.error.issues.map((i) => i.path)).toEqual([['jobs', 1, 'payload', 's']]);
  expect((await db.pool.query("select count(*)::int as n from workhorse.jobs where namespace = 'stored-paths'")).rows[0].n).toBe(0);
});

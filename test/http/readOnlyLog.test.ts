// A write the database refuses as read-only is answered 503 saying so, and
// its log line says so too: it said "the database did not answer", which
// sends an operator to the network instead of the failover or the setting.
// Over a real socket, against the test server, the session read-only by
// its connection string.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../../src/client/defineJob.js';
import { createClient, type Client } from '../../src/client/client.js';
import { createApp } from '../../src/http/createApp.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { fakeTick, TOKEN, type ErrorJson } from './helpers.js';
import { startServer, type RunningServer } from './support/server.js';

let db: TestDatabase;
let client: Client;
let server: RunningServer;
const logged: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  const url = new URL(db.url);
  url.searchParams.set('options', '-c default_transaction_read_only=on');
  client = createClient({ connectionString: url.toString(), poolMax: 1 });
  server = await startServer(createApp({ client, apiToken: TOKEN, tick: fakeTick().fn, log: (message) => logged.push(message) }));
});
afterAll(async () => {
  await server?.close();
  await client?.close();
  await db?.drop();
});

it('POST /jobs/:id/cancel on a read-only session: 503 saying read-only, and a log line saying the same', async () => {
  // The job, written through a session that may write.
  const writer = createClient({ connectionString: db.url, poolMax: 1, jobs: [defineJob({ type: 'any.type', schema: z.object({}) })] });
  const { id } = await writer.enqueue('any.type', {});
  await writer.close();
  const res = await fetch(`${server.url}/jobs/${id}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(503);
  expect(((await res.json()) as ErrorJson).error.message).toMatch(/read-only/);
  expect(logged).toEqual([`[workhorse http] POST /jobs/${id}/cancel: the database refused the write: it is read-only:`]);
});

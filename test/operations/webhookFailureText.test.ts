// What a webhook's failure says in the event's last error, which is all an
// operator reading GET /outbox has: a port with nothing on it, a name that
// does not resolve and a server that resets the connection each say so
// (they were all "fetch failed"), and a server that never answers says the
// sink's own time limit (it was "The operation was aborted due to timeout").
// Real HTTP on loopback and real sockets.
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Client } from '../../src/client/client.js';
import { freePort } from '../../src/db/freePort.js';
import { deliverOutbox } from '../../src/outbox/deliver.js';
import { parseOutboxOptions } from '../../src/outbox/outboxOptions.js';
import { webhookSink } from '../../src/outbox/webhookSink.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const SECRET = 'webhook-failure-secret-0123456789';
let db: TestDatabase;
let client: Client;
let hanging: Server;
let resetting: TcpServer;

const port = (s: Server | TcpServer) => (s.address() as AddressInfo).port;

beforeAll(async () => {
  db = await createTestDatabase();
  client = new Client({ connectionString: db.url });
  hanging = createServer(() => undefined);
  resetting = createTcpServer((socket) => socket.once('data', () => socket.resetAndDestroy()));
  await Promise.all([hanging, resetting].map((s) => new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))));
});
afterAll(async () => {
  hanging.closeAllConnections();
  await Promise.all([hanging, resetting].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  await client.close();
  await db.drop();
});

async function lastErrorFor(url: string, timeoutMs = 10_000): Promise<string> {
  await db.pool.query('delete from workhorse.outbox_events');
  const { id } = await client.publish('failure.text', { n: 1 });
  const options = parseOutboxOptions({ sinks: [webhookSink({ url, secret: SECRET, timeoutMs })], maxAttempts: 5 });
  expect(await deliverOutbox(client, options, { maxBatches: 1 })).toMatchObject({ delivered: 0, retried: 1 });
  const { rows } = await db.pool.query<{ last_error: { message: string } }>('select last_error from workhorse.outbox_events where id = $1', [id]);
  return rows[0]!.last_error.message;
}

it('a port with nothing on it names ECONNREFUSED', async () => {
  const closed = await freePort();
  expect(await lastErrorFor(`http://127.0.0.1:${closed}/hook`)).toMatch(/^webhook http:\/\/127\.0\.0\.1:\d+\/hook: fetch failed \(connect ECONNREFUSED 127\.0\.0\.1:\d+\)$/);
});

it('localhost with nothing on the port (a refusal from each of its addresses) names ECONNREFUSED', async () => {
  const closed = await freePort();
  expect(await lastErrorFor(`http://localhost:${closed}/hook`)).toMatch(/: fetch failed \((ECONNREFUSED|connect ECONNREFUSED [^)]+)\)$/);
});

it('a name that does not resolve names ENOTFOUND', async () => {
  expect(await lastErrorFor('http://no-such-host.invalid/hook')).toMatch(/: fetch failed \(getaddrinfo (ENOTFOUND|EAI_AGAIN) no-such-host\.invalid\)$/);
});

it('a server that resets the connection names ECONNRESET', async () => {
  expect(await lastErrorFor(`http://127.0.0.1:${port(resetting)}/hook`)).toMatch(/: fetch failed \(((read|write) ECONNRESET|other side closed)\)$/);
});

it("a server that never answers names the sink's time limit", async () => {
  expect(await lastErrorFor(`http://127.0.0.1:${port(hanging)}/hook`, 300)).toMatch(/: no answer within 300 ms \(the sink's timeoutMs\)$/);
});

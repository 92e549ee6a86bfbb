// A server whose connection settings the database refuses, or that cannot be
// used at all, answers every route `503 database_unreachable` with
// `Retry-After: 1` and one log line, as a refused login does: a setting in
// the URL's `options` the server rejects answered `400 validation_failed`
// (its SQLSTATE is class 22, read as the request's bad value) or `500
// internal` (an unknown setting, 42704), and `sslmode=require` against a
// server without SSL answered `500 internal` with a stack in the log, while
// /healthz said the database "did not answer". Over a real socket, against
// the test server, and a socket that declines SSL as PostgreSQL does.
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/client/client.js';
import { createApp } from '../../src/http/createApp.js';
import { serverUrl } from '../helpers/db.js';
import { fakeTick, TOKEN, type ErrorJson } from './helpers.js';
import { startServer, type RunningServer } from './support/server.js';

/** Answers PostgreSQL's SSLRequest with 'N' (no SSL here), as a server without SSL does. */
let noSsl: Server;
beforeAll(async () => {
  noSsl = createServer((socket) => {
    socket.once('data', () => socket.write('N'));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => noSsl.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  await new Promise<void>((resolve) => noSsl.close(() => resolve()));
});

function urlWith(change: (u: URL) => void): () => string {
  return () => {
    const u = new URL(serverUrl());
    change(u);
    return u.toString();
  };
}

const cases = [
  ['a setting the server rejects the value of (22023)', urlWith((u) => u.searchParams.set('options', '-c work_mem=abc'))],
  ['a setting the server does not know (42704)', urlWith((u) => u.searchParams.set('options', '-c no_such.setting_x=1 -c foo=bar'))],
  [
    'sslmode=require against a server without SSL',
    urlWith((u) => {
      u.hostname = '127.0.0.1';
      u.port = String((noSsl.address() as AddressInfo).port);
      u.searchParams.set('sslmode', 'require');
    }),
  ],
] as const;

const bearer = { authorization: `Bearer ${TOKEN}` };

describe.each(cases)('a server whose connection is refused: %s', (_what, url) => {
  let client: Client;
  let server: RunningServer;
  const logged: { message: string; err: unknown }[] = [];

  beforeAll(async () => {
    client = createClient({ connectionString: url(), poolMax: 1 });
    const app = createApp({ client, apiToken: TOKEN, tick: fakeTick().fn, log: (message, err) => logged.push({ message, err }) });
    server = await startServer(app);
  });
  afterAll(async () => {
    await server?.close();
    await client?.close();
  });

  it.each([
    ['GET', '/jobs/1'],
    ['GET', '/queues'],
    ['POST', '/jobs'],
  ])('%s %s: 503 database_unreachable, one log line without a stack', async (method, path) => {
    logged.length = 0;
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { ...bearer, 'content-type': 'application/json' },
      ...(method === 'POST' ? { body: JSON.stringify({ type: 'no.such', payload: {} }) } : {}),
    });
    const body = (await res.json()) as ErrorJson;
    // POST /jobs of an unknown type is refused before any SQL: 400, which is right; the others reach the database.
    if (method === 'POST') return expect(res.status).toBe(400);
    expect([res.status, body.error.code]).toEqual([503, 'database_unreachable']);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(body.error.message).toMatch(/^the server could not open a database connection .*: its log says why; retry shortly$/);
    expect(logged.map((l) => l.message)).toEqual([`[workhorse http] ${method} ${path}: the server could not open a database connection (the database refused the session, or the connection settings cannot be used):`]);
    expect(typeof logged[0]!.err).toBe('string');
  });

  it('a dashboard page: 503 with Retry-After: 1', async () => {
    const page = await fetch(`${server.url}/ui`, { headers: bearer });
    expect(page.status).toBe(503);
    expect(page.headers.get('retry-after')).toBe('1');
  });

  it('/healthz: 503 database_unreachable, not "did not answer"', async () => {
    const res = await fetch(`${server.url}/healthz`);
    expect(res.status).toBe(503);
    const body = (await res.json()) as ErrorJson;
    expect(body.error.code).toBe('database_unreachable');
    expect(body.error.message).not.toBe('the database did not answer');
  });
});

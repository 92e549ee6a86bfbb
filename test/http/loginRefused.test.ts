// A server whose database refuses its login (a database that was dropped or
// never created: 3D000; a role that does not exist: 28000) answers every
// route `503 database_unreachable` with `Retry-After: 1` and one log line,
// as a database that does not answer does; it answered `500 internal` and
// logged a pg stack for each request, while its own /healthz said 503.
// Over a real socket, against the test server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/client/client.js';
import { createApp } from '../../src/http/createApp.js';
import { serverUrl } from '../helpers/db.js';
import { fakeTick, TOKEN, type ErrorJson } from './helpers.js';
import { startServer, type RunningServer } from './support/server.js';

function urlWith(change: (u: URL) => void): string {
  const u = new URL(serverUrl());
  change(u);
  return u.toString();
}

const cases = [
  ['a database that does not exist', '3D000', urlWith((u) => (u.pathname = '/wh_no_such_database'))],
  // 28000 under trust authentication, 28P01 where the server asks for a password first.
  ['a role that does not exist', '28000|28P01', urlWith((u) => (u.username = 'wh_no_such_role'))],
] as const;

const bearer = { authorization: `Bearer ${TOKEN}` };

describe.each(cases)('a server whose login is refused: %s', (_what, sqlstate, url) => {
  let client: Client;
  let server: RunningServer;
  const logged: { message: string; err: unknown }[] = [];

  beforeAll(async () => {
    client = createClient({ connectionString: url, poolMax: 1 });
    const app = createApp({ client, apiToken: TOKEN, tick: fakeTick().fn, log: (message, err) => logged.push({ message, err }) });
    server = await startServer(app);
  });
  afterAll(async () => {
    await server?.close();
    await client?.close();
  });

  it.each(['/jobs', '/jobs/1', '/queues'])('GET %s: 503 database_unreachable naming the SQLSTATE, one log line', async (path) => {
    logged.length = 0;
    const res = await fetch(`${server.url}${path}`, { headers: bearer });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    const body = (await res.json()) as ErrorJson;
    expect(body.error.code).toBe('database_unreachable');
    expect(body.error.message).toMatch(new RegExp(`^the database refused this server's login \\(SQLSTATE (${sqlstate})\\): its log says why; retry shortly$`));
    expect(logged.map((l) => l.message)).toEqual([`[workhorse http] GET ${path}: the database refused this server's login:`]);
    // One line: the driver's message, not an Error with its stack.
    expect(typeof logged[0]!.err).toBe('string');
  });

  it('a dashboard page: 503 with Retry-After: 1', async () => {
    logged.length = 0;
    const page = await fetch(`${server.url}/ui/queues`, { headers: bearer });
    expect(page.status).toBe(503);
    expect(page.headers.get('retry-after')).toBe('1');
    expect(await page.text()).toContain('Code <code>database_unreachable</code> (HTTP 503)');
    expect(logged.map((l) => l.message)).toEqual(["[workhorse ui] GET /ui/queues: the database refused this server's login:"]);
  });
});

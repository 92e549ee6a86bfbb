// A database that does not answer is `503 database_unreachable` with
// `Retry-After: 1` on every route, over a real socket: the JSON API's,
// GET /healthz and the dashboard's pages (and their live refresh). The API
// and the dashboard log one line per failed request; /healthz, which load
// balancers probe every few seconds, logs nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/client/client.js';
import { createApp } from '../../src/http/createApp.js';
import { createHealthCheck, type HealthCheck } from '../../src/http/healthCheck.js';
import { fakeTick, TOKEN, type ErrorJson } from './helpers.js';
import { startServer, type RunningServer } from './support/server.js';

const NOWHERE = 'postgres://nobody@127.0.0.1:1/none';

let client: Client;
let health: HealthCheck;
let server: RunningServer;
const logged: string[] = [];

beforeAll(async () => {
  client = createClient({ connectionString: NOWHERE, poolMax: 1 });
  health = createHealthCheck({ poolConfig: { connectionString: NOWHERE }, timeoutMs: 300, cacheMs: 0 });
  const app = createApp({ client, apiToken: TOKEN, tick: fakeTick().fn, health, log: (message) => logged.push(message) });
  server = await startServer(app);
});

afterAll(async () => {
  await server?.close();
  await health?.close();
  await client?.close();
});

const bearer = { authorization: `Bearer ${TOKEN}` };

describe('database_unreachable on every route', () => {
  it('the JSON API: 503 with Retry-After: 1 and one log line', async () => {
    logged.length = 0;
    const res = await fetch(`${server.url}/jobs`, { headers: bearer });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(((await res.json()) as ErrorJson).error.code).toBe('database_unreachable');
    expect(logged).toEqual(['[workhorse http] GET /jobs: the database did not answer:']);
  });

  it('GET /healthz: 503 with Retry-After: 1, not logged', async () => {
    logged.length = 0;
    const res = await fetch(`${server.url}/healthz`);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(await res.json()).toEqual({ error: { code: 'database_unreachable', message: 'the database did not answer' } });
    expect(logged).toEqual([]);
  });

  it('the dashboard: a page and a live refresh are 503 with Retry-After: 1, one log line each', async () => {
    logged.length = 0;
    const page = await fetch(`${server.url}/ui/queues`, { headers: bearer });
    expect(page.status).toBe(503);
    expect(page.headers.get('retry-after')).toBe('1');
    expect(await page.text()).toContain('Code <code>database_unreachable</code> (HTTP 503)');
    expect(logged).toEqual(['[workhorse ui] GET /ui/queues: the database did not answer:']);

    const live = await fetch(`${server.url}/ui/jobs/7`, { headers: { ...bearer, 'x-workhorse-live': '1' } });
    expect(live.status).toBe(503);
    expect(live.headers.get('retry-after')).toBe('1');
    expect(((await live.json()) as ErrorJson).error.code).toBe('database_unreachable');
    expect(logged).toEqual(['[workhorse ui] GET /ui/queues: the database did not answer:', '[workhorse ui] GET /ui/jobs/7: the database did not answer:']);
  });
});

// `workhorse serve` as a child process over a PostgreSQL cluster this file
// owns: while the server is stopped, and while a tiny statement_timeout
// cancels every statement, the API routes answer 503 `database_unreachable`
// with Retry-After (never a 500), and once the database is back they answer
// as before without a restart. A request that finds no free connection in
// the server's pool within its connect timeout is a 503 too.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOwnCluster, type OwnCluster } from '../../certify/ownCluster.js';
import { migrate } from '../../src/db/migrate.js';
import { startServeProcess, type ServeProcess } from '../helpers/serveProcess.js';

const TOKEN = 'serve-down-token-0123456789abcdef';
let cluster: OwnCluster;
let serve: ServeProcess;

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; retryAfter: string | null; body: unknown }> {
  const r = await fetch(serve.baseUrl + path, {
    method,
    body: body === undefined ? undefined : JSON.stringify(body),
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    signal: AbortSignal.timeout(20_000),
  });
  return { status: r.status, retryAfter: r.headers.get('retry-after'), body: await r.json() };
}

const routes: [string, string, unknown?][] = [
  ['GET', '/jobs?limit=2'],
  ['POST', '/jobs', { type: 'email.send', payload: { to: 'a@example.com', subject: 's' } }],
  ['GET', '/queues'],
  ['POST', '/jobs/1/cancel', {}],
  ['GET', '/decisions'],
];

async function setStatementTimeout(value: string): Promise<void> {
  // Its own connection is exempt, so the reset after the run is never cancelled.
  const c = new pg.Client({ connectionString: cluster.url(), options: '-c statement_timeout=0' });
  c.on('error', () => undefined);
  await c.connect();
  await c.query(`alter system set statement_timeout = '${value}'`);
  await c.query('select pg_reload_conf()');
  await c.end();
}

beforeAll(async () => {
  cluster = await startOwnCluster();
  await migrate({ connectionString: cluster.url() });
  serve = await startServeProcess({ DATABASE_URL: cluster.url(), WORKHORSE_API_TOKEN: TOKEN });
}, 60_000);

afterAll(async () => {
  serve?.child.kill('SIGKILL');
  await cluster?.destroy();
});

describe('workhorse serve without its database', () => {
  it('answers 503 database_unreachable while the server is stopped, and serves again once it is back', async () => {
    expect((await call('POST', '/jobs', routes[1]![2])).status).toBe(201);
    await cluster.halt('immediate');
    for (const [method, path, body] of routes) {
      const r = await call(method, path, body);
      expect({ path, status: r.status, retryAfter: r.retryAfter, body: r.body }).toEqual({
        path,
        status: 503,
        retryAfter: '1',
        body: { error: { code: 'database_unreachable', message: 'the database did not answer; retry shortly' } },
      });
    }
    expect(serve.output()).toMatch(/GET \/queues: the database did not answer: .*ECONNREFUSED/);
    await cluster.resume();
    expect((await call('POST', '/jobs', routes[1]![2])).status).toBe(201);
    expect((await call('GET', '/queues')).status).toBe(200);
    expect(serve.child.exitCode).toBeNull();
  });

  it('answers 503 while a tiny statement_timeout cancels its statements', async () => {
    await setStatementTimeout('1ms');
    try {
      // Each statement either beats the 1 ms limit or is cancelled; a cancelled one is a 503, never a 500.
      const answers = [];
      for (let i = 0; i < 10; i++) for (const [method, path, body] of routes) answers.push({ path, ...(await call(method, path, body)) });
      expect(answers.filter((a) => a.status !== 503 && a.status >= 500)).toEqual([]);
      const unavailable = answers.filter((a) => a.status === 503);
      expect(unavailable.length).toBeGreaterThan(0);
      for (const a of unavailable) {
        expect(a.body).toEqual({ error: { code: 'database_unreachable', message: 'the database cancelled the statement (a statement_timeout, or pg_cancel_backend); retry shortly' } });
      }
    } finally {
      await setStatementTimeout('0');
    }
    expect((await call('GET', '/queues')).status).toBe(200);
  });

  it('answers 503 to the requests that find no free pool connection while a lock holds the others', async () => {
    // One transaction locks the jobs table: the server's 10 connections wait
    // on it, and the requests beyond them wait for a connection until the
    // pool's 10 s connect timeout.
    const locker = new pg.Client({ connectionString: cluster.url() });
    await locker.connect();
    await locker.query('begin; lock table workhorse.jobs in access exclusive mode');
    const body = routes[1]![2];
    const answers = Array.from({ length: 12 }, () => call('POST', '/jobs', body));
    await new Promise((r) => setTimeout(r, 11_000));
    await locker.query('rollback');
    await locker.end();
    const got = await Promise.all(answers);
    expect(got.map((a) => a.status).sort()).toEqual([...Array(10).fill(201), 503, 503]);
    for (const a of got.filter((x) => x.status === 503)) {
      expect(a.body).toEqual({ error: { code: 'database_unreachable', message: 'the database did not answer; retry shortly' } });
    }
    expect(serve.output()).toMatch(/POST \/jobs: the database did not answer: timeout exceeded when trying to connect/);
  }, 40_000);
});

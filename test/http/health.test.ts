// GET /healthz on its own bounded path: it answers while every connection of
// the API's pool is taken and 200 list requests queue behind them; a flood of
// probes costs one schema-version read; a database that accepts connections
// but never answers makes it 503 within its timeout, not hang.
import { createServer, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHealthCheck } from '../../src/http/healthCheck.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';
import { buildHttp, TOKEN, type HttpHarness } from './helpers.js';
import { startServer, type RunningServer } from './support/server.js';

let db: TestDatabase;
let h: HttpHarness;
let server: RunningServer;

beforeAll(async () => {
  db = await createTestDatabase();
  h = buildHttp(db);
  // As `workhorse serve` does at start: the version check passed, so the list requests each wait for a connection.
  await h.client.ready();
  server = await startServer(h.app);
});

afterAll(async () => {
  await server.close();
  await h.client.close();
  await db.drop();
});

describe('GET /healthz under load', () => {
  it('answers while the API pool is saturated by 200 concurrent list requests', async () => {
    const max = h.client.pool.options.max!;
    const held = await Promise.all(Array.from({ length: max }, () => h.client.pool.connect()));
    const lists = Array.from({ length: 200 }, () => fetch(`${server.url}/jobs`, { headers: { authorization: `Bearer ${TOKEN}` } }));
    try {
      // Every list request is queued behind the held connections before the probe is sent.
      await waitFor(() => h.client.pool.waitingCount, (n) => n === lists.length, { what: 'all list requests to wait for the API pool' });
      const started = performance.now();
      const res = await fetch(`${server.url}/healthz`);
      const ms = performance.now() - started;
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ ok: true });
      console.info(`[healthz] answered in ${ms.toFixed(1)} ms with all ${max} API connections held and ${h.client.pool.waitingCount} queries waiting`);
      // A generous bound: the point is that it does not wait for the API pool.
      expect(ms).toBeLessThan(1000);
    } finally {
      for (const c of held) c.release();
    }
    const statuses = await Promise.all(lists.map(async (p) => (await p).status));
    expect(statuses.every((s) => s === 200)).toBe(true);
  });
});

describe('createHealthCheck', () => {
  it('says a server that answered with an error (no such database) answered, by SQLSTATE only, and one that does not answer did not', async () => {
    const url = new URL(db.url);
    url.pathname = '/no_such_database_here';
    const missing = createHealthCheck({ poolConfig: { connectionString: url.toString() }, cacheMs: 0 });
    const down = createHealthCheck({ poolConfig: { connectionString: 'postgres://nobody@127.0.0.1:1/none' }, cacheMs: 0 });
    try {
      const refused = await missing.check();
      expect(refused).toEqual({ ok: false, code: 'database_unreachable', message: "the database answered with an error (SQLSTATE 3D000): PostgreSQL's log says which" });
      // The answer names no database or role: the probe is open to anyone.
      expect(JSON.stringify(refused)).not.toContain('no_such_database_here');
      expect(await down.check()).toEqual({ ok: false, code: 'database_unreachable', message: 'the database did not answer' });
    } finally {
      await missing.close();
      await down.close();
    }
  });

  it('shares one schema-version read between a flood of concurrent probes, and caches it', async () => {
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    let queries = 0;
    pool.on('acquire', () => queries++);
    const health = createHealthCheck({ pool, cacheMs: 60_000 });
    try {
      const answers = await Promise.all(Array.from({ length: 100 }, () => health.check()));
      expect(answers.every((a) => a.ok)).toBe(true);
      const perProbe = queries;
      // readSchemaVersion checks the migrations table exists, then reads it; then whether the database takes writes.
      expect(perProbe).toBe(3);
      await Promise.all(Array.from({ length: 100 }, () => health.check()));
      expect(queries).toBe(perProbe);
    } finally {
      await pool.end();
    }
  });

  it('answers 503 for a database that takes no writes, as a worker\'s /readyz does (it answered 200 while every write route answered 503)', async () => {
    const url = new URL(db.url);
    url.searchParams.set('options', '-c default_transaction_read_only=on');
    const health = createHealthCheck({ poolConfig: { connectionString: url.toString() }, cacheMs: 0 });
    try {
      expect(await health.check()).toEqual({ ok: false, code: 'database_unreachable', message: expect.stringMatching(/the database is read-only/) });
    } finally {
      await health.close();
    }
  });

  it('answers 200 again once the database takes writes, however often it is probed (its read-only session was kept, and stayed read-only)', async () => {
    const other = await createTestDatabase();
    const health = createHealthCheck({ poolConfig: { connectionString: other.url }, cacheMs: 0 });
    try {
      await db.pool.query(`alter database ${other.name} set default_transaction_read_only = on`);
      expect(await health.check()).toMatchObject({ ok: false, message: expect.stringMatching(/read-only/) });
      await db.pool.query(`alter database ${other.name} reset default_transaction_read_only`);
      // Probed at once, as a load balancer would within seconds.
      expect(await health.check()).toMatchObject({ ok: true });
    } finally {
      await health.close();
      await other.drop();
    }
  });

  it('answers a login refused database_unreachable, as every route does', async () => {
    const url = new URL(db.url);
    url.username = 'no_such_role_for_health';
    const health = createHealthCheck({ poolConfig: { connectionString: url.toString() }, cacheMs: 0 });
    try {
      expect(await health.check()).toEqual({ ok: false, code: 'database_unreachable', message: expect.stringMatching(/SQLSTATE 28000/) });
    } finally {
      await health.close();
    }
  });

  it('names a refusal only an operator ends database_needs_operator, as every route does (it said the database was unreachable)', async () => {
    const role = `wh_noperm_${process.pid}`;
    await db.pool.query(`drop role if exists ${role}`);
    await db.pool.query(`create role ${role} login`);
    await db.pool.query(`revoke all on schema workhorse from ${role}`);
    const url = new URL(db.url);
    url.username = role;
    const health = createHealthCheck({ poolConfig: { connectionString: url.toString() }, cacheMs: 0 });
    try {
      expect(await health.check()).toEqual({ ok: false, code: 'database_needs_operator', message: expect.stringMatching(/SQLSTATE 42501.*an operator must act/) });
    } finally {
      await health.close();
      await db.pool.query(`drop role if exists ${role}`);
    }
  });

  it('probes again once the cached answer is older than cacheMs', async () => {
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    let queries = 0;
    pool.on('acquire', () => queries++);
    const health = createHealthCheck({ pool, cacheMs: 100 });
    try {
      await health.check();
      const first = queries;
      await new Promise((r) => setTimeout(r, 150));
      await health.check();
      expect(queries).toBe(2 * first);
    } finally {
      await pool.end();
    }
  });

  it('answers database_unreachable within its timeout when the server accepts connections but never answers', async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((s) => sockets.push(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const { port } = silent.address() as { port: number };
    const health = createHealthCheck({ poolConfig: { connectionString: `postgres://nobody@127.0.0.1:${port}/none` }, timeoutMs: 300 });
    try {
      const started = performance.now();
      const status = await health.check();
      const ms = performance.now() - started;
      expect(status).toEqual({ ok: false, code: 'database_unreachable', message: 'the database did not answer' });
      expect(ms).toBeLessThan(2000);
    } finally {
      await health.close();
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });
});

// POST /jobs while another session holds a lock on workhorse.jobs (a
// CREATE INDEX, an ALTER TABLE) longer than the lock_timeout set on the
// database: PostgreSQL ends the enqueue with 55P03 lock_not_available. The
// API answered 500 internal_error, as for a bug; like a statement its
// statement_timeout cancelled, it is now 503 database_unreachable with
// Retry-After, and the retry after the lock ends is accepted.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { buildHttp, TOKEN, type HttpHarness } from './helpers.js';
import { startServer, type RunningServer } from './support/server.js';

let db: TestDatabase;
let h: HttpHarness;
let server: RunningServer;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query(`alter database ${db.name} set lock_timeout = '200ms'`);
  h = buildHttp(db);
  server = await startServer(h.app);
});

afterAll(async () => {
  await server?.close();
  await h?.client.close();
  await db?.drop();
});

const enqueue = () =>
  fetch(`${server.url}/jobs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'email.send', payload: { to: 'ada@example.com', subject: 'hi' } }),
  });

describe('POST /jobs past its lock_timeout', () => {
  it('answers 503 database_unreachable with Retry-After, and enqueues once the lock ends', async () => {
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('lock table workhorse.jobs in share mode');
      const res = await enqueue();
      const body = (await res.json()) as { error: { code: string } };
      expect({ status: res.status, code: body.error.code, retryAfter: res.headers.get('retry-after') }).toEqual({
        status: 503,
        code: 'database_unreachable',
        retryAfter: '1',
      });
      await locker.query('commit');
    } finally {
      await locker.end();
    }
    expect((await enqueue()).status).toBe(201);
    expect((await db.pool.query<{ n: number }>('select count(*)::int n from workhorse.jobs')).rows[0]!.n).toBe(1);
  });
});

// A pool of yours whose settings make the driver throw as it makes a client
// (an sslrootcert that is a directory: EISDIR, thrown inside pool.connect
// rather than passed to its callback) fails a call at once as a refused
// session: the HTTP API answers 503, and no timer is left to hold the
// process open for callTimeoutMs (it stayed up 30 s after close()).
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClient } from '../../src/index.js';
import { isConnectRefusal } from '../../src/db/connectRefusal.js';
import { describeError } from '../../src/http/middleware/errorHandler.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

it('fails the call at once, tagged as a refused session (503 over HTTP), the call timer cleared', async () => {
  const url = new URL(db.url);
  url.searchParams.set('sslrootcert', '/tmp');
  const pool = new pg.Pool({ connectionString: url.toString(), max: 1 });
  const client = createClient({ pool, callTimeoutMs: 30_000 });
  const started = Date.now();
  const err = await client.getJob('1').catch((e: unknown) => e);
  expect(Date.now() - started).toBeLessThan(5_000);
  expect((err as { code?: string }).code).toBe('EISDIR');
  expect(isConnectRefusal(err)).toBe(true);
  expect(describeError(err)).toMatchObject({ status: 503, body: { code: 'database_unreachable' } });
  await client.close();
  await pool.end();
});

it("a new session's set-up statement cancelled by a statement_timeout or a lock timeout is a fault, not a refused session", async () => {
  const { GuardedDb } = await import('../../src/db/guardedDb.js');
  for (const code of ['57014', '55P03']) {
    const failing = Object.assign(new Error('canceling statement'), { code, severity: 'ERROR' });
    const pool = { connect: (cb: (err: Error) => void) => setImmediate(() => cb(failing)) } as unknown as pg.Pool;
    const err = await new GuardedDb(pool, { timeoutMs: 1_000 }).query('select 1').catch((e: unknown) => e);
    expect(err).toBe(failing);
    expect(isConnectRefusal(err)).toBe(false);
    const message = code === '57014' ? 'the database cancelled the statement (a statement_timeout, or pg_cancel_backend); retry shortly' : 'the database did not answer; retry shortly';
    expect(describeError(err)).toMatchObject({ status: 503, body: { code: 'database_unreachable', message } });
  }
});

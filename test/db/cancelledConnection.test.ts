// A statement PostgreSQL cancels (57014) has its connection replaced, not
// lent out again. The cancelling statement_timeout may be the session's own:
// taken from the database when it connected and kept for its life. A worker
// whose pool connected while the database had `statement_timeout = 1ms`
// (an operator's mistake, a migration tool's leftover) failed every
// heartbeat, claim and settlement on that connection until restarted, long
// after the setting was reset; the client's own calls likewise. Now the
// next call connects afresh and takes the setting as it is.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GuardedDb } from '../../src/db/guardedDb.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let db: TestDatabase;
let dbName: string;

beforeAll(async () => {
  db = await createTestDatabase();
  dbName = new URL(db.url).pathname.slice(1);
});

afterAll(async () => {
  await db?.drop();
});

describe('a statement cancelled by the session’s statement_timeout', () => {
  it('has its connection replaced: once the setting is reset, the next call succeeds', async () => {
    await db.pool.query(`alter database "${dbName}" set statement_timeout = '1ms'`);
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    pool.on('error', () => undefined);
    const guarded = new GuardedDb(pool, { timeoutMs: 10_000 });
    try {
      const cancelled = await guarded.query('select pg_sleep(0.05)').catch((e: unknown) => e);
      expect((cancelled as { code?: string }).code).toBe('57014');
      await db.pool.query(`alter database "${dbName}" reset statement_timeout`);
      // The one connection the pool may hold connected under the old setting.
      await expect(guarded.query('select pg_sleep(0.05)')).resolves.toBeDefined();
      const r = (await guarded.query('show statement_timeout')) as { rows: { statement_timeout: string }[] };
      expect(r.rows[0]!.statement_timeout).toBe('0');
    } finally {
      await pool.end();
      await db.pool.query(`alter database "${dbName}" reset statement_timeout`);
    }
  });
});

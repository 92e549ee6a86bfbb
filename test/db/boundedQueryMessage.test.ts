// A bounded query with no answer in time says what may be behind it: not
// only a server that hangs or cannot be reached, but a statement waiting for
// a lock another session holds (an idle-in-transaction session holding a job
// row stalled every settlement of a fleet, and the line said only "no answer
// from the database", which sent operators looking for a dead server).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GuardedDb } from '../../src/db/guardedDb.js';
import { DatabaseUnavailableError } from '../../src/errors.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query('create table held (id int primary key)');
  await db.pool.query('insert into held values (1)');
});
afterAll(async () => {
  await db?.drop();
});

describe('a bounded query blocked by a lock', () => {
  it('fails within its bound with a DatabaseUnavailableError that names a lock as a possible cause', async () => {
    const holder = await db.pool.connect();
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    pool.on('error', () => undefined);
    try {
      await holder.query('begin');
      await holder.query('select * from held where id = 1 for update');
      const err = await new GuardedDb(pool, { timeoutMs: 300 }).query('update held set id = 1 where id = 1').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DatabaseUnavailableError);
      expect((err as Error).message).toMatch(/^no answer from the database within 300 ms \(.*waiting for a lock another session holds: see pg_stat_activity\)$/);
    } finally {
      await holder.query('rollback');
      holder.release();
      await pool.end();
    }
  });
});

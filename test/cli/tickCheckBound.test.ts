// `workhorse tick` checks the schema version before the tick, on a pool of
// its own whose connect was bounded but whose query was not: while another
// session held a lock on workhorse.migrations (an ALTER TABLE or VACUUM FULL
// of it, a restore), the check waited for the lock and the command ran past
// its --budget-ms for as long as the lock lasted. The check's query is now
// bounded by the budget too: the tick exits 1 within it, saying the database
// did not answer.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { cliEnv, runCli } from './support/runCli.js';

const APP = 'test/fixtures/tick-app.ts';
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.drop();
});

describe('workhorse tick while workhorse.migrations is locked', () => {
  it('exits 1 within its budget instead of waiting for the lock', async () => {
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('lock table workhorse.migrations in access exclusive mode');
      const start = Date.now();
      const r = await runCli(['tick', APP, '--budget-ms', '2000'], cliEnv({ DATABASE_URL: db.url }), undefined, 20_000);
      // The budget plus the child's start (tsx compiling the CLI: 2-4 s on a busy 2-core machine);
      // unbounded, the check waited for the lock until runCli's 20 s limit.
      expect(Date.now() - start).toBeLessThan(2_000 + 6_000);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^workhorse tick: .*(did not answer|no answer|timeout)/im);
    } finally {
      await locker.query('rollback').catch(() => undefined);
      await locker.end();
    }
  }, 30_000);
});

// A worker process warns once at start when the server does not vacuum the
// queue's tables (autovacuum or track_counts off, or a workhorse table with
// autovacuum_enabled = false): the dead rows every claim and settlement
// leaves would never be cleared, the tables would grow whatever the
// retention, and claims would slow down, with nothing saying why.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { autovacuumWarning } from '../../src/worker/autovacuumCheck.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('the autovacuum check of a worker process', () => {
  it('warns for the server setting or a workhorse table that turns it off, and says nothing when it runs', async () => {
    const server = (await db.pool.query<{ on: boolean }>("select current_setting('autovacuum') = 'on' and current_setting('track_counts') = 'on' as on")).rows[0]!.on;
    if (!server) {
      // This server (the test machine's may be one) does not vacuum at all: that is what the line says.
      expect(await autovacuumWarning(db.pool)).toMatch(/^\[workhorse\] warning: (autovacuum is off on this server|track_counts is off on this server, so autovacuum never starts): the dead rows /);
      return;
    }
    expect(await autovacuumWarning(db.pool)).toBeUndefined();
    await db.pool.query('alter table workhorse.job_runtime set (autovacuum_enabled = false)');
    try {
      expect(await autovacuumWarning(db.pool)).toBe(
        "[workhorse] warning: autovacuum is disabled on workhorse.job_runtime: the dead rows every claim and settlement leaves are never cleared, so the queue's tables grow whatever the retention and claims slow down; turn it on, or VACUUM the workhorse tables on a schedule",
      );
    } finally {
      await db.pool.query('alter table workhorse.job_runtime reset (autovacuum_enabled)');
    }
  });

  it('says nothing when the server will not answer (a check, not a requirement)', async () => {
    const broken = { query: () => Promise.reject(new Error('permission denied')) };
    expect(await autovacuumWarning(broken as never)).toBeUndefined();
  });
});

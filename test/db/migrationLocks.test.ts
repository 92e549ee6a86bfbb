// A migration whose DDL needs a lock another session holds (an
// idle-in-transaction session that read workhorse.jobs). Before, it waited
// for ever, and every query of the fleet on that table queued behind its
// lock request. Now each attempt waits at most 2 s, the migration rolls back
// and tries again, and past `lockTimeoutMs` it gives up with a
// MigrationLockTimeoutError naming the session in its way, having applied
// nothing. So does one behind another migration holding the migration lock
// (a migrator frozen mid-migration): it was waited for without end.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { findSqlDir } from '../../src/db/sqlFiles.js';
import { ConfigError, MigrationLockTimeoutError } from '../../src/errors.js';
import { cliEnv, runCli } from '../cli/support/runCli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let db: TestDatabase;
let sqlDir: string;
const blockers: pg.Client[] = [];

/** A session that read `table` and then sat idle in its transaction. */
async function idleInTransaction(sql: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: db.url, application_name: 'nightly-report' });
  await c.connect();
  blockers.push(c);
  await c.query('begin');
  await c.query(sql);
  return c;
}

async function pidOf(c: pg.Client): Promise<number> {
  return (await c.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
}

async function probeApplied(): Promise<{ recorded: boolean; column: boolean }> {
  const r = await db.pool.query<{ recorded: boolean; column: boolean }>(
    `select exists (select 1 from workhorse.migrations where version = 900) as recorded,
            exists (select 1 from information_schema.columns
                     where table_schema = 'workhorse' and table_name = 'jobs' and column_name = 'lock_probe') as column`,
  );
  return r.rows[0]!;
}

beforeAll(async () => {
  db = await createTestDatabase();
  // This code's sql/ plus one pending migration that alters the jobs table.
  sqlDir = mkdtempSync(join(tmpdir(), 'wh-sql-'));
  cpSync(findSqlDir(), sqlDir, { recursive: true });
  writeFileSync(join(sqlDir, '900_lock_probe.sql'), 'alter table workhorse.jobs add column lock_probe integer;\n');
  const order = readFileSync(join(sqlDir, 'ORDER'), 'utf8').split('\n');
  order.splice(order.findIndex((l) => l.startsWith('protocol/')), 0, '900_lock_probe.sql');
  writeFileSync(join(sqlDir, 'ORDER'), order.join('\n'));
});

afterEach(async () => {
  for (const c of blockers.splice(0)) await c.end().catch(() => undefined);
});

afterAll(async () => {
  rmSync(sqlDir, { recursive: true, force: true });
  await db?.drop();
});

describe('a migration behind a session holding a lock on a workhorse table', () => {
  it('gives up after lockTimeoutMs with a MigrationLockTimeoutError naming the session, applying nothing', async () => {
    const blocker = await idleInTransaction('select count(*) from workhorse.jobs');
    const pid = await pidOf(blocker);
    const started = Date.now();
    const err = await migrate({ connectionString: db.url, sqlDir, lockTimeoutMs: 3_000 }).catch((e: unknown) => e);
    const took = Date.now() - started;

    expect(err).toBeInstanceOf(MigrationLockTimeoutError);
    const e = err as MigrationLockTimeoutError;
    expect(e.code).toBe('migration_lock_timeout');
    expect(e.file).toBe('900_lock_probe.sql');
    expect(e.holders).toEqual([
      expect.objectContaining({ pid, state: 'idle in transaction', applicationName: 'nightly-report', user: expect.any(String) }),
    ]);
    expect(e.message).toMatch(
      new RegExp(`^sql/900_lock_probe\\.sql waited \\d+ s for locks on workhorse tables held by pid ${pid} \\(idle in transaction, transaction open \\d+ s, user "[^"]+", application "nightly-report"\\): end those transactions .* nothing was applied$`),
    );
    // Within the budget and one more attempt's lock wait, not for ever.
    expect(took).toBeLessThan(3_000 + 2_000 + 1_500);
    expect(await probeApplied()).toEqual({ recorded: false, column: false });
  });

  it('gives up after lockTimeoutMs behind another migration that holds the migration lock (a migrator frozen mid-migration), naming it', async () => {
    // What a migrator whose connection froze mid-migration leaves: the
    // migration lock held by a session idle in its transaction.
    const frozen = await idleInTransaction('select pg_advisory_xact_lock(7700011999)');
    const pid = await pidOf(frozen);
    const started = Date.now();
    const err = await migrate({ connectionString: db.url, sqlDir, lockTimeoutMs: 2_000 }).catch((e: unknown) => e);
    const took = Date.now() - started;
    expect(err).toBeInstanceOf(MigrationLockTimeoutError);
    const e = err as MigrationLockTimeoutError;
    expect(e.holders).toEqual([expect.objectContaining({ pid, state: 'idle in transaction', applicationName: 'nightly-report' })]);
    expect(e.message).toMatch(new RegExp(`^sql/bootstrap\\.sql waited \\d+ s for the migration lock \\(another migration\\) held by pid ${pid} \\(idle in transaction, `));
    // Before, it waited for as long as the other session lived.
    expect(took).toBeLessThan(2_000 + 1_500);
    expect(await probeApplied()).toEqual({ recorded: false, column: false });
  });

  it("keeps the fleet's queries on that table moving while it waits", async () => {
    await idleInTransaction('select count(*) from workhorse.jobs');
    const migrating = migrate({ connectionString: db.url, sqlDir, lockTimeoutMs: 6_000 }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 500));
    // A worker's statement on jobs: it queues behind the migration's lock
    // request for at most one attempt's wait (before: until the blocker ended).
    const worker = new pg.Client({ connectionString: db.url });
    await worker.connect();
    try {
      await worker.query('set statement_timeout = 4000');
      const r = await worker.query<{ n: number }>('select count(*)::int as n from workhorse.jobs');
      expect(r.rows[0]!.n).toBe(0);
    } finally {
      await worker.end();
    }
    expect(await migrating).toBeInstanceOf(MigrationLockTimeoutError);
  });

  it('refuses a lockTimeoutMs that is not a whole number of milliseconds, before connecting', async () => {
    for (const bad of [-1, 1.5, Number.NaN, 4_000_000]) {
      const err = await migrate({ connectionString: 'postgres://127.0.0.1:1/none', lockTimeoutMs: bad }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toContain('lockTimeoutMs');
    }
  });
});

describe('workhorse migrate behind such a session', () => {
  it('exits 1 with one line naming the session', async () => {
    const blocker = await idleInTransaction('lock table workhorse.migrations in access exclusive mode');
    const pid = await pidOf(blocker);
    const r = await runCli(['migrate', '--lock-timeout-ms', '1000'], cliEnv({ DATABASE_URL: db.url }));
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toMatch(
      new RegExp(`^workhorse migrate: sql/bootstrap\\.sql waited \\d+ s for locks on workhorse tables held by pid ${pid} \\(idle in transaction, .*application "nightly-report"\\)`),
    );
  });

  it('refuses a --lock-timeout-ms that is not a whole number (exit 2)', async () => {
    const r = await runCli(['migrate', '--lock-timeout-ms', '1e3'], cliEnv({ DATABASE_URL: db.url }));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--lock-timeout-ms');
  });
});

// Last: it records migration 900, which the CLI's own sql/ does not have.
describe('a migration whose blocker ends in time', () => {
  it('applies the migration once the session ends within the budget', async () => {
    const blocker = await idleInTransaction('select count(*) from workhorse.jobs');
    const migrating = migrate({ connectionString: db.url, sqlDir, lockTimeoutMs: 20_000 });
    setTimeout(() => void blocker.query('commit'), 1_500);
    const r = await migrating;
    expect(r.applied).toEqual([900]);
    expect(await probeApplied()).toEqual({ recorded: true, column: true });
  });
});

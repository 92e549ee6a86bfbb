// Brings a database to this code's schema, in one transaction: the
// bootstrap (which takes a transaction-scoped advisory lock, so fifty
// processes starting at once apply each file once and the rest find nothing
// to do, and nothing outlives the transaction behind a pooler), then every
// numbered migration not yet applied, then the protocol files when their
// checksum differs from the one last applied or when one of their functions
// is missing (dropped by hand: missingProtocolFunctions.ts). A database that records a
// migration this code does not have is refused untouched (newerSchema.ts).
// (The start-up schema check is schemaCheck.ts: the tick and HTTP
// functions check, never migrate.)
//
// Table locks: a statement that must lock a table other sessions hold (an
// ALTER TABLE behind an idle-in-transaction session) waits at most
// LOCK_ATTEMPT_MS, because every query of the running fleet on that table
// queues behind the waiting lock request. Then the migration rolls back and
// tries again, for up to `lockTimeoutMs` in all, and gives up with a
// MigrationLockTimeoutError naming the sessions in its way. Another
// migration's lock is waited for within the same budget (a migrator that
// froze mid-migration is named, not waited for without end), and the
// migration's own transaction is ended by the server if it sits idle
// (MIGRATION_IDLE_MS), so a frozen migrator cannot hold the lock for hours.
import pg from 'pg';
import { DatabaseUnavailableError, MigrationLockTimeoutError, WorkhorseError } from '../errors.js';
import { GuardedDb } from './guardedDb.js';
import { lockHolders, migrationLockHolders } from './lockHolders.js';
import { missingProtocolFunctions } from './missingProtocolFunctions.js';
import { refuseNewerSchema } from './newerSchema.js';
import { parseMigrateOptions } from './migrateOptions.js';
import { loadSchemaSql, type Migration, type SqlFile } from './sqlFiles.js';
import { isLockTimeout, SQLSTATE, sqlStateOf } from './sqlState.js';
import { isTransientDbError } from './transient.js';

/** How long a migration waits for its connection (other migrators hold the lock, not the connection). */
const MIGRATION_CONNECT_TIMEOUT_MS = 60_000;
/** How long opening the migration's connection may take. */
const CONNECT_TIMEOUT_MS = 10_000;
/** How long one attempt's statement waits for a table lock (the fleet's queries on that table wait behind it meanwhile). */
const LOCK_ATTEMPT_MS = 2_000;
/** The pause between attempts, doubling up to LOCK_RETRY_MAX_MS. */
const LOCK_RETRY_MS = 250;
const LOCK_RETRY_MAX_MS = 4_000;
/** The same advisory lock sql/bootstrap.sql takes (taken first here, so waiting for another migrator is not a table-lock attempt). */
const MIGRATION_LOCK = '7700011999';
/**
 * How long the migration's transaction may sit idle before PostgreSQL ends
 * it. A live migrator sends its statements back to back; one whose process
 * froze or whose connection hung mid-migration would otherwise hold the
 * migration lock (and its transaction) until TCP gave up, hours later, and
 * every later migrator would wait for it.
 */
const MIGRATION_IDLE_MS = 30_000;

export interface MigrateOptions {
  /** A pg Pool or a connection string. */
  pool?: pg.Pool;
  connectionString?: string;
  /** The sql/ directory (found automatically). */
  sqlDir?: string;
  /**
   * How long to keep trying when other sessions hold locks a migration's
   * statement needs, in ms (default 60,000). Each attempt waits at most 2 s
   * for a lock, then rolls back; past this, a MigrationLockTimeoutError.
   */
  lockTimeoutMs?: number;
}

export interface MigrateResult {
  /** Numbered migrations this call applied. */
  applied: number[];
  version: number;
  /** Protocol functions the database did not have although their checksum was applied (dropped since), now installed again. */
  reinstalled: string[];
  /** The protocol files changed (a release that changed only them) and every protocol function was installed again. */
  protocolUpdated: boolean;
  /**
   * No checksum of the protocol files was recorded (the schema was installed
   * by `psql`, which cannot compute one): they were installed again, the
   * same files, and their checksum is recorded now, so the next migrate
   * finds them up to date.
   */
  protocolRecorded: boolean;
  /**
   * WARNINGs PostgreSQL raised while migrating, e.g. that the
   * workhorse_runtime role does not exist and the migrating role may not
   * create it (008_runtime_role.sql): what an operator must act on.
   */
  warnings: string[];
}

export async function migrate(input: MigrateOptions): Promise<MigrateResult> {
  const options = parseMigrateOptions(input);
  const budgetMs = options.lockTimeoutMs;
  const schema = loadSchemaSql(options.sqlDir);
  // pg's own connect timeout: without it a server that accepts the TCP
  // connection and never answers the startup (a wrong port, a blackholed
  // host) keeps the attempt, and pool.end() below, waiting forever.
  const pool = options.pool ?? new pg.Pool({ connectionString: options.connectionString, max: 1, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // An idle connection the server drops must not crash the process.
  if (!options.pool) pool.on('error', () => undefined);
  // A backend terminated mid-migration fails the migration (it rolls back);
  // it must not crash the process with an unhandled 'error' event.
  // A connection that cannot be made is a DatabaseUnavailableError, as for every other call.
  const guarded = new GuardedDb(pool, { timeoutMs: MIGRATION_CONNECT_TIMEOUT_MS, typedConnectFaults: true });
  try {
    return await guarded.withClient(async (client) => {
      const started = Date.now();
      for (let pauseMs = LOCK_RETRY_MS; ; pauseMs = Math.min(pauseMs * 2, LOCK_RETRY_MAX_MS)) {
        try {
          return await attempt(client, schema, budgetMs - (Date.now() - started));
        } catch (err) {
          if (err instanceof MigratorBusy) {
            const holders = await migrationLockHolders(client).catch(() => []);
            throw new MigrationLockTimeoutError('bootstrap.sql', Date.now() - started, holders, { cause: err.cause, lock: 'the migration lock (another migration)' });
          }
          if (!(err instanceof LockNotAvailable)) throw err;
          const waitedMs = Date.now() - started;
          if (waitedMs + pauseMs >= budgetMs) {
            const holders = await lockHolders(client, LOCK_ATTEMPT_MS).catch(() => []);
            throw new MigrationLockTimeoutError(err.file, waitedMs, holders, { cause: err.cause });
          }
          await new Promise((resolve) => setTimeout(resolve, pauseMs));
        }
      }
    });
  } finally {
    if (!options.pool) await pool.end();
  }
}

/**
 * One transaction: everything applied, or (rolled back) nothing. Another
 * migrator's lock is waited for up to `leftMs` (what is left of the
 * budget) in one wait, then each table lock up to LOCK_ATTEMPT_MS.
 */
async function attempt(client: pg.PoolClient, schema: ReturnType<typeof loadSchemaSql>, leftMs: number): Promise<MigrateResult> {
  const warnings: string[] = [];
  const onNotice = (n: { severity?: string; message?: string }) => {
    if (n.severity === 'WARNING' && n.message) warnings.push(n.message);
  };
  client.on('notice', onNotice);
  try {
    await client.query(
      `begin; set local idle_in_transaction_session_timeout = ${MIGRATION_IDLE_MS}; set local lock_timeout = ${Math.max(1, Math.round(leftMs))}`,
    );
    try {
      await client.query(`select pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    } catch (err) {
      if (isLockTimeout(err)) throw new MigratorBusy({ cause: err });
      throw err;
    }
    await client.query(`set local lock_timeout = ${LOCK_ATTEMPT_MS}`);
    await run(client, schema.bootstrap);
    const done = new Set(
      (await client.query<{ version: number }>('select version from workhorse.migrations')).rows.map((r) => r.version),
    );
    // Newer code migrated this database: refuse before anything changes (the transaction rolls back).
    refuseNewerSchema(done, schema.migrations);
    const applied: number[] = [];
    for (const m of schema.migrations) {
      if (done.has(m.version)) continue;
      await applyMigration(client, m);
      applied.push(m.version);
    }
    const stored = await client.query<{ checksum: string }>('select checksum from workhorse.protocol_state');
    const unchanged = stored.rows[0]?.checksum === schema.protocolChecksum && applied.length === 0;
    // Unchanged files whose functions are all there need nothing; one dropped by hand is put back.
    const reinstalled = unchanged ? await missingProtocolFunctions(client, schema.protocolFunctions) : [];
    // Re-applied when they changed, when a function is missing, and after any
    // numbered file (its new tables get the runtime role's grants from protocol/grants.sql).
    if (!unchanged || reinstalled.length > 0) {
      for (const f of schema.protocol) await run(client, f);
      await client.query(
        `insert into workhorse.protocol_state (id, checksum) values (true, $1)
         on conflict (id) do update set checksum = excluded.checksum, applied_at = now()`,
        [schema.protocolChecksum],
      );
    } else {
      // Nothing to install, but the runtime role's grants are given again (idempotent): a role created since
      // the last migrate (by someone with CREATEROLE, as 008's warning asks) gets them from "migrate again",
      // and so do grants revoked by hand. They were given only when some file was installed.
      await client.query('select workhorse.grant_runtime_v1()');
    }
    await client.query('commit');
    const protocolRecorded = stored.rows.length === 0 && applied.length === 0;
    const protocolUpdated = !unchanged && applied.length === 0 && !protocolRecorded;
    return { applied, version: Math.max(0, ...schema.migrations.map((m) => m.version)), reinstalled, protocolUpdated, protocolRecorded, warnings };
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    if (isLockTimeout(err) && !(err instanceof LockNotAvailable) && !(err instanceof MigratorBusy)) throw new LockNotAvailable('bootstrap.sql', { cause: err });
    throw err;
  } finally {
    client.off('notice', onNotice);
  }
}

/** Another migration held the migration lock for the whole budget (internal: migrate() names it). */
class MigratorBusy extends Error {
  constructor(options: { cause: unknown }) {
    super('the migration lock: not available', options);
  }
}

/** A statement of `file` gave up waiting for a table lock (internal: migrate() tries again). */
class LockNotAvailable extends Error {
  constructor(readonly file: string, options: { cause: unknown }) {
    super(`sql/${file}: lock not available`, options);
  }
}

async function run(client: pg.PoolClient, f: SqlFile): Promise<void> {
  try {
    await client.query(f.sql);
  } catch (err) {
    if (isLockTimeout(err)) throw new LockNotAvailable(f.path, { cause: err });
    const message = `sql/${f.path} failed: ${(err as Error).message}`;
    if (sqlStateOf(err) === SQLSTATE.insufficientPrivilege) {
      throw new WorkhorseError(
        'migration_not_permitted',
        `${message}: migrations run as the owner of the workhorse schema (or a role that may create it in this database), ` +
          'not as a login of the workhorse_runtime role, which cannot change the schema (docs/deployment.md, "Two credentials")',
        { cause: err },
      );
    }
    // The server went away mid-migration (it rolls back): a retry may succeed.
    if (isTransientDbError(err)) throw new DatabaseUnavailableError(`${message} (the migration rolled back; run it again)`, { cause: err });
    throw new Error(message, { cause: err });
  }
}

async function applyMigration(client: pg.PoolClient, m: Migration): Promise<void> {
  await run(client, { path: `${String(m.version).padStart(3, '0')}_${m.name}.sql`, sql: m.sql });
  // Each file records itself too (so a psql-only install is recognised); this covers one that does not.
  await client.query('insert into workhorse.migrations (version, name) values ($1, $2) on conflict (version) do nothing', [
    m.version,
    m.name,
  ]);
}

// Brings a database to this code's schema, in one transaction: the
// bootstrap (which takes a transaction-scoped advisory lock, so fifty
// processes starting at once apply each file once and the rest find nothing
// to do, and nothing outlives the transaction behind a pooler), then every
// numbered migration not yet applied, then the protocol files when their
// checksum differs from the one last applied. A database that records a
// migration this code does not have is refused untouched (newerSchema.ts).
// (The start-up schema check is schemaCheck.ts: the tick and HTTP
// functions check, never migrate.)
import pg from 'pg';
import { DatabaseUnavailableError, WorkhorseError } from '../errors.js';
import { GuardedDb } from './guardedDb.js';
import { refuseNewerSchema } from './newerSchema.js';
import { loadSchemaSql, type Migration, type SqlFile } from './sqlFiles.js';
import { SQLSTATE, sqlStateOf } from './sqlState.js';
import { isTransientDbError } from './transient.js';

/** How long a migration waits for its connection (other migrators hold the lock, not the connection). */
const MIGRATION_CONNECT_TIMEOUT_MS = 60_000;
/** How long opening the migration's connection may take. */
const CONNECT_TIMEOUT_MS = 10_000;

export interface MigrateOptions {
  /** A pg Pool or a connection string. */
  pool?: pg.Pool;
  connectionString?: string;
  /** The sql/ directory (found automatically). */
  sqlDir?: string;
}

export interface MigrateResult {
  /** Numbered migrations this call applied. */
  applied: number[];
  version: number;
}

export async function migrate(options: MigrateOptions): Promise<MigrateResult> {
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
      try {
        await client.query('begin');
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
        // Re-applied when they changed, and after any numbered file (its new
        // tables get the runtime role's grants from protocol/grants.sql).
        if (stored.rows[0]?.checksum !== schema.protocolChecksum || applied.length > 0) {
          for (const f of schema.protocol) await run(client, f);
          await client.query(
            `insert into workhorse.protocol_state (id, checksum) values (true, $1)
             on conflict (id) do update set checksum = excluded.checksum, applied_at = now()`,
            [schema.protocolChecksum],
          );
        }
        await client.query('commit');
        return { applied, version: Math.max(0, ...schema.migrations.map((m) => m.version)) };
      } catch (err) {
        await client.query('rollback').catch(() => undefined);
        throw err;
      }
    });
  } finally {
    if (!options.pool) await pool.end();
  }
}

async function run(client: pg.PoolClient, f: SqlFile): Promise<void> {
  try {
    await client.query(f.sql);
  } catch (err) {
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

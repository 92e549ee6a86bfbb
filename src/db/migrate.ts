// Applies the numbered migrations in sql/ in order. One transaction under a
// transaction-scoped advisory lock (pooler-safe: nothing outlives the
// transaction), so fifty processes starting at once apply each file once
// and the rest find nothing to do. Also the start-up schema check.
import pg from 'pg';
import { SchemaVersionError } from '../errors.js';
import { SCHEMA_VERSION } from './schemaVersion.js';
import { loadMigrations, type Migration } from './sqlFiles.js';

/** Arbitrary constant key for pg_advisory_xact_lock: "workhorse" in ASCII-ish. */
const MIGRATION_LOCK_KEY = 7_700_011_999;

export interface MigrateOptions {
  /** A pg Pool or a connection string. */
  pool?: pg.Pool;
  connectionString?: string;
  /** Directory holding the NNN_name.sql files (found automatically). */
  sqlDir?: string;
}

export interface MigrateResult {
  applied: number[];
  version: number;
}

export async function migrate(options: MigrateOptions): Promise<MigrateResult> {
  const migrations = loadMigrations(options.sqlDir);
  const pool = options.pool ?? new pg.Pool({ connectionString: options.connectionString, max: 1 });
  // An idle connection the server drops must not crash the process.
  if (!options.pool) pool.on('error', () => undefined);
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await client.query('create schema if not exists workhorse');
    await client.query(
      `create table if not exists workhorse.migrations (
         version integer primary key, name text not null, applied_at timestamptz not null default now())`,
    );
    const done = new Set(
      (await client.query<{ version: number }>('select version from workhorse.migrations')).rows.map((r) => r.version),
    );
    const applied: number[] = [];
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await applyOne(client, m);
      applied.push(m.version);
    }
    if (applied.length > 0) await grantRuntime(client);
    await client.query('commit');
    const version = Math.max(0, ...migrations.map((m) => m.version));
    return { applied, version };
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    throw err;
  } finally {
    client.release();
    if (!options.pool) await pool.end();
  }
}

async function applyOne(client: pg.PoolClient, m: Migration): Promise<void> {
  try {
    await client.query(m.sql);
  } catch (err) {
    throw new Error(`migration ${m.version}_${m.name} failed: ${(err as Error).message}`, { cause: err });
  }
  await client.query('insert into workhorse.migrations (version, name) values ($1, $2)', [m.version, m.name]);
}

/** Re-grants the runtime role (sql/008_runtime_role.sql) what the files just applied created, once that function exists. */
async function grantRuntime(client: pg.PoolClient): Promise<void> {
  const r = await client.query<{ f: boolean }>(`select to_regprocedure('workhorse.grant_runtime_v1()') is not null as f`);
  if (r.rows[0]?.f) await client.query('select workhorse.grant_runtime_v1()');
}

/** Reads the applied schema version; null when workhorse was never migrated. */
export async function readSchemaVersion(db: { query: pg.Pool['query'] }): Promise<number | null> {
  const exists = await db.query<{ e: boolean }>(`select to_regclass('workhorse.migrations') is not null as e`);
  if (!exists.rows[0]?.e) return null;
  const r = await db.query<{ v: number | null }>('select max(version) as v from workhorse.migrations');
  return r.rows[0]?.v ?? null;
}

/** Throws SchemaVersionError unless the database is at SCHEMA_VERSION. */
export async function assertSchemaVersion(db: { query: pg.Pool['query'] }): Promise<void> {
  const found = await readSchemaVersion(db);
  if (found !== SCHEMA_VERSION) throw new SchemaVersionError(found, SCHEMA_VERSION);
}

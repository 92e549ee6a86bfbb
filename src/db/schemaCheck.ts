// The start-up schema check: which schema version a database holds, and a
// refusal to run against any other. Apart from migrate.ts so that what only
// checks (a tick, the HTTP API, a worker) does not carry the migrator.
import { SchemaVersionError, ValidationError } from '../errors.js';
import type { Queryable } from './queryable.js';
import { SCHEMA_VERSION } from './schemaVersion.js';
import { mapped } from './sqlState.js';

/** Reads the applied schema version; null when workhorse was never migrated. */
export function readSchemaVersion(db: Queryable): Promise<number | null> {
  if (typeof (db as Partial<Queryable> | null | undefined)?.query !== 'function') {
    const message = 'expected a pg Pool, Client or PoolClient (anything with query())';
    return Promise.reject(new ValidationError(`invalid database: ${message}`, [{ path: ['db'], message }]));
  }
  return mapped({}, () => querySchemaVersion(db));
}

async function querySchemaVersion(db: Queryable): Promise<number | null> {
  const exists = await db.query<{ fn: boolean; table: boolean }>(
    `select to_regprocedure('workhorse.schema_version_v1()') is not null as fn,
            to_regclass('workhorse.migrations') is not null as table`,
  );
  const e = exists.rows[0];
  if (e?.fn) return (await db.query<{ v: number | null }>('select workhorse.schema_version_v1() as v')).rows[0]?.v ?? null;
  // A database migrated before schema_version_v1() existed.
  if (e?.table) return (await db.query<{ v: number | null }>('select max(version) as v from workhorse.migrations')).rows[0]?.v ?? null;
  return null;
}

/** Throws SchemaVersionError unless the database is at SCHEMA_VERSION. */
export async function assertSchemaVersion(db: Queryable): Promise<void> {
  const found = await readSchemaVersion(db);
  if (found !== SCHEMA_VERSION) throw new SchemaVersionError(found, SCHEMA_VERSION);
}

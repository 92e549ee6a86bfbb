// Older code migrating a database that newer code already migrated: the
// database records a numbered migration the older code does not have, and
// protocol function bodies (one function the older code does not know) the
// newer fleet runs on. migrate() and `workhorse migrate` refuse with a
// SchemaVersionError naming both versions and change nothing; they used to
// drop every protocol function and put the older bodies back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { SCHEMA_VERSION } from '../../src/db/schemaVersion.js';
import { SchemaVersionError } from '../../src/errors.js';
import { cliEnv, runCli } from '../cli/support/runCli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const NEWER = SCHEMA_VERSION + 1;

let db: TestDatabase;

interface SchemaState {
  migrations: { version: number; name: string }[];
  checksum: string;
  newerFunction: boolean;
  functions: number;
}

async function schemaState(): Promise<SchemaState> {
  const migrations = (await db.pool.query<{ version: number; name: string }>('select version, name from workhorse.migrations order by version')).rows;
  const checksum = (await db.pool.query<{ checksum: string }>('select checksum from workhorse.protocol_state')).rows[0]!.checksum;
  const fns = await db.pool.query<{ newer: boolean; n: number }>(
    `select to_regprocedure('workhorse.newer_code_only_v1()') is not null as newer,
            (select count(*)::int from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'workhorse') as n`,
  );
  return { migrations, checksum, newerFunction: fns.rows[0]!.newer, functions: fns.rows[0]!.n };
}

beforeAll(async () => {
  db = await createTestDatabase();
  // What newer code's migrate leaves behind: its numbered file recorded, its
  // protocol files applied (a function this code does not define) under
  // their own checksum.
  await db.pool.query('insert into workhorse.migrations (version, name) values ($1, $2)', [NEWER, 'from_newer_code']);
  await db.pool.query(`create function workhorse.newer_code_only_v1() returns integer language sql as 'select 1'`);
  await db.pool.query(`update workhorse.protocol_state set checksum = 'checksum-of-newer-protocol-files'`);
});

afterAll(async () => {
  await db?.drop();
});

describe('migrating a database that newer code migrated', () => {
  it('migrate() refuses with a SchemaVersionError naming the database version and the code version', async () => {
    const err = await migrate({ connectionString: db.url }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchemaVersionError);
    expect(err).toMatchObject({ code: 'schema_version', found: NEWER, expected: SCHEMA_VERSION });
    expect((err as Error).message).toBe(
      `workhorse schema version ${NEWER} is ahead of this code (expects ${SCHEMA_VERSION}): upgrade workhorse in this service before running it against this database ` +
        `(the database records migration ${NEWER} that this code does not have; nothing was changed)`,
    );
  });

  it('migrate() changes nothing: the newer protocol functions, their checksum and the migration rows stay', async () => {
    const before = await schemaState();
    expect(before.newerFunction).toBe(true);
    await expect(migrate({ connectionString: db.url })).rejects.toBeInstanceOf(SchemaVersionError);
    expect(await schemaState()).toEqual(before);
  });

  it('`workhorse migrate` refuses in one line, exit 1, and changes nothing', async () => {
    const before = await schemaState();
    const r = await runCli(['migrate', '--database-url', db.url], cliEnv());
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toBe(`workhorse migrate: ${new SchemaVersionError(NEWER, SCHEMA_VERSION, {
      detail: `the database records migration ${NEWER} that this code does not have; nothing was changed`,
    }).message}`);
    expect(await schemaState()).toEqual(before);
  });
});

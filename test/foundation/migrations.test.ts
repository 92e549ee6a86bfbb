// Foundation (10): migrations. Fifty concurrent migrate() calls on an empty
// database all succeed and apply each migration exactly once; the start-up
// check refuses a schema that is missing, behind or ahead of the code.
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/client.js';
import { migrate } from '../../src/db/migrate.js';
import { assertSchemaVersion, readSchemaVersion } from '../../src/db/schemaCheck.js';
import { SCHEMA_VERSION } from '../../src/db/schemaVersion.js';
import { loadMigrations } from '../../src/db/sqlFiles.js';
import { SchemaVersionError } from '../../src/errors.js';
import { createEmptyDatabase } from '../helpers/db.js';

const drops: (() => Promise<void>)[] = [];
const pools: pg.Pool[] = [];

function poolFor(url: string, max: number): pg.Pool {
  const p = new pg.Pool({ connectionString: url, max });
  p.on('error', () => undefined);
  pools.push(p);
  return p;
}

afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.end()));
});

afterAll(async () => {
  for (const drop of drops) await drop();
});

async function emptyDb() {
  const db = await createEmptyDatabase();
  drops.push(db.drop);
  return db;
}

describe('migrations', () => {
  it('applies every migration exactly once when 50 migrate() calls start at once on an empty database', async () => {
    const db = await emptyDb();
    // Fifty concurrent calls; the pool keeps the connection count modest
    // (each call holds one connection for its whole transaction).
    const pool = poolFor(db.url, 20);
    const results = await Promise.all(Array.from({ length: 50 }, () => migrate({ pool })));

    const versions = loadMigrations().map((m) => m.version);
    expect(versions.at(-1)).toBe(SCHEMA_VERSION);
    // All succeeded; exactly one call applied the files, the rest found nothing to do.
    expect(results).toHaveLength(50);
    for (const r of results) expect(r.version).toBe(SCHEMA_VERSION);
    const appliers = results.filter((r) => r.applied.length > 0);
    expect(appliers).toHaveLength(1);
    expect(appliers[0]!.applied).toEqual(versions);
    expect(results.flatMap((r) => r.applied).sort((a, b) => a - b)).toEqual(versions);

    const rows = await pool.query<{ version: number; n: number }>(
      'select version, count(*)::int as n from workhorse.migrations group by version order by version',
    );
    expect(rows.rows).toEqual(versions.map((version) => ({ version, n: 1 })));
    await expect(assertSchemaVersion(pool)).resolves.toBeUndefined();
  });

  it('also holds with one connection per call (separate pools, as separate processes would)', async () => {
    const db = await emptyDb();
    const results = await Promise.all(Array.from({ length: 10 }, () => migrate({ connectionString: db.url })));
    expect(results.filter((r) => r.applied.length > 0)).toHaveLength(1);
    const pool = poolFor(db.url, 1);
    expect(await readSchemaVersion(pool)).toBe(SCHEMA_VERSION);
  });

  it('is a no-op on an up-to-date database', async () => {
    const db = await emptyDb();
    const pool = poolFor(db.url, 2);
    await migrate({ pool });
    expect(await migrate({ pool })).toEqual({ applied: [], version: SCHEMA_VERSION, reinstalled: [], protocolUpdated: false, protocolRecorded: false, warnings: [] });
  });

  it('refuses a database with no schema, telling the user to migrate', async () => {
    const db = await emptyDb();
    const pool = poolFor(db.url, 2);
    const err = (await assertSchemaVersion(pool).catch((e: unknown) => e)) as SchemaVersionError;
    expect(err).toBeInstanceOf(SchemaVersionError);
    expect(err).toMatchObject({ code: 'schema_version', found: null, expected: SCHEMA_VERSION });
    expect(err.message).toContain('workhorse migrate');
    // The client's ready() (run before the first enqueue) gives the same error.
    const client = createClient({ pool });
    await expect(client.ready()).rejects.toBeInstanceOf(SchemaVersionError);
  });

  it('refuses a schema behind the code and one ahead of it with SchemaVersionError', async () => {
    const db = await emptyDb();
    const pool = poolFor(db.url, 2);
    await migrate({ pool });

    await pool.query('delete from workhorse.migrations where version = $1', [SCHEMA_VERSION]);
    const previous = loadMigrations().map((m) => m.version).at(-2) ?? null;
    const behind = (await assertSchemaVersion(pool).catch((e: unknown) => e)) as SchemaVersionError;
    expect(behind).toBeInstanceOf(SchemaVersionError);
    expect(behind).toMatchObject({ found: previous, expected: SCHEMA_VERSION });
    expect(behind.message).toContain('behind');

    await pool.query(`insert into workhorse.migrations (version, name) values ($1, 'from_the_future'), ($2, 'x')`, [
      SCHEMA_VERSION,
      SCHEMA_VERSION + 1,
    ]);
    const ahead = (await assertSchemaVersion(pool).catch((e: unknown) => e)) as SchemaVersionError;
    expect(ahead).toBeInstanceOf(SchemaVersionError);
    expect(ahead).toMatchObject({ found: SCHEMA_VERSION + 1, expected: SCHEMA_VERSION });
    expect(ahead.message).toContain('ahead');
  });
});

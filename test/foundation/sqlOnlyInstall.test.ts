// sql/ holds the whole schema: running the files of sql/ORDER in one
// transaction, as `psql -1 -f ...` does (plain SQL files, no psql meta
// commands, so a simple-query round trip per file is the same thing), with
// no TypeScript, installs a schema whose functions are exactly those
// `migrate()` installs, each with a COMMENT stating its contract.
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { readSchemaVersion } from '../../src/db/schemaCheck.js';
import { SCHEMA_VERSION } from '../../src/db/schemaVersion.js';
import { orderedSqlFiles } from '../../src/db/sqlFiles.js';
import { createEmptyDatabase } from '../helpers/db.js';

const drops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const d of drops) await d();
});

interface FunctionDef {
  name: string;
  def: string;
  comment: string | null;
}

async function functionsOf(url: string): Promise<FunctionDef[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query<FunctionDef>(
      `select p.oid::regprocedure::text as name, pg_get_functiondef(p.oid) as def, obj_description(p.oid, 'pg_proc') as comment
         from pg_proc p join pg_namespace n on n.oid = p.pronamespace
        where n.nspname = 'workhorse' order by 1`,
    );
    return r.rows;
  } finally {
    await c.end();
  }
}

describe('the SQL alone', () => {
  it('installs the same functions as migrate(), each with a contract comment, at this schema version', async () => {
    const normal = await createEmptyDatabase();
    const sqlOnly = await createEmptyDatabase();
    drops.push(normal.drop, sqlOnly.drop);
    await migrate({ connectionString: normal.url });

    const c = new pg.Client({ connectionString: sqlOnly.url });
    await c.connect();
    try {
      await c.query('begin');
      for (const f of orderedSqlFiles()) await c.query(f.sql);
      await c.query('commit');
      expect(await readSchemaVersion(c)).toBe(SCHEMA_VERSION);
    } finally {
      await c.end();
    }

    const a = await functionsOf(normal.url);
    const b = await functionsOf(sqlOnly.url);
    expect(a.length).toBeGreaterThan(30);
    expect(b).toEqual(a);
    expect(a.filter((f) => !f.comment || f.comment.length < 40).map((f) => f.name)).toEqual([]);
    // migrate() on the SQL-only database finds no migration left to apply; the SQL alone records no
    // protocol checksum, so it installs the protocol files once more and says so.
    expect(await migrate({ connectionString: sqlOnly.url })).toEqual({
      applied: [],
      version: SCHEMA_VERSION,
      reinstalled: [],
      protocolUpdated: false,
      protocolRecorded: true,
      warnings: [],
    });
    expect(await migrate({ connectionString: sqlOnly.url })).toMatchObject({ protocolUpdated: false, protocolRecorded: false });
  });
});

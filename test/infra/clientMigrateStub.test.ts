// The migrator is left out of the Lambda bundles that only check the schema
// (infra/clientMigrateStub.ts): a bundle holding the client, built the way
// the construct builds them, still checks the schema and enqueues, its
// client.migrate() says plainly where migrations run, the migrator's code is
// gone, and a static import of the migrator (the migration function's) is
// bundled as usual and migrates.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_MIGRATE_STUB_MESSAGE } from '../../infra/clientMigrateStub.js';
import { bundleLambdaEntry } from '../../infra/lambdaBundle.js';
import { readSchemaVersion } from '../../src/db/schemaCheck.js';
import { findSqlDir } from '../../src/db/sqlFiles.js';
import { SCHEMA_VERSION } from '../../src/db/schemaVersion.js';
import { createEmptyDatabase, createTestDatabase, type TestDatabase } from '../helpers/db.js';

const dir = mkdtempSync(join(tmpdir(), 'wh-client-migrate-'));
const src = (f: string) => JSON.stringify(join(process.cwd(), 'src', f));
writeFileSync(
  join(dir, 'checker.ts'),
  [
    `import * as z from ${JSON.stringify(createRequire(import.meta.url).resolve('zod'))};`,
    `import { Client } from ${src('client/client.ts')};`,
    `import { defineJob } from ${src('client/defineJob.ts')};`,
    "const Probe = defineJob({ type: 'bundle.probe', schema: z.object({}) });",
    'export async function enqueueChecked(connectionString: string): Promise<string> {',
    '  const client = new Client({ connectionString, jobs: [Probe] });',
    "  try { await client.ready(); return (await client.enqueue(Probe, {})).id; } finally { await client.close(); }",
    '}',
    'export async function migrateThroughClient(connectionString: string): Promise<unknown> {',
    '  const client = new Client({ connectionString });',
    '  try { return await client.migrate(); } finally { await client.close(); }',
    '}',
    '',
  ].join('\n'),
);
writeFileSync(join(dir, 'migrator.ts'), `export { migrate } from ${src('db/migrate.ts')};\n`);
const build = (name: string) => {
  const outDir = join(dir, name);
  bundleLambdaEntry({ entryFile: join(dir, `${name}.ts`), outDir, sqlDir: findSqlDir(), minify: true, sourceMap: false, external: [] });
  return join(outDir, 'index.mjs');
};
const checker = build('checker');
const migrator = build('migrator');

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('a Lambda bundle holding the client', () => {
  it('checks the schema and enqueues', async () => {
    const m = (await import(pathToFileURL(checker).href)) as { enqueueChecked: (url: string) => Promise<string> };
    const id = await m.enqueueChecked(db.url);
    const row = await db.pool.query('select type from workhorse.jobs where id = $1', [id]);
    expect(row.rows[0]).toEqual({ type: 'bundle.probe' });
  });

  it('refuses client.migrate() saying where migrations run, and writes nothing', async () => {
    const empty = await createEmptyDatabase();
    try {
      const m = (await import(pathToFileURL(checker).href)) as { migrateThroughClient: (url: string) => Promise<unknown> };
      await expect(m.migrateThroughClient(empty.url)).rejects.toThrow(CLIENT_MIGRATE_STUB_MESSAGE);
      const pool = new pg.Pool({ connectionString: empty.url, max: 1 });
      try {
        expect(await readSchemaVersion(pool)).toBeNull();
      } finally {
        await pool.end();
      }
    } finally {
      await empty.drop();
    }
  });

  it('carries the stub instead of the migrator and its SQL file loader', () => {
    const code = readFileSync(checker, 'utf8');
    expect(code.includes(CLIENT_MIGRATE_STUB_MESSAGE)).toBe(true);
    // sqlFiles.ts's test for the sql/ directory, which only the migrator reaches.
    expect(code.includes('001_schema.sql')).toBe(false);
  });
});

describe('a bundle importing the migrator itself (the migration function)', () => {
  it('keeps it, and it migrates an empty database', async () => {
    const code = readFileSync(migrator, 'utf8');
    expect(code.includes(CLIENT_MIGRATE_STUB_MESSAGE)).toBe(false);
    expect(code.includes('001_schema.sql')).toBe(true);
    const empty = await createEmptyDatabase();
    try {
      const m = (await import(pathToFileURL(migrator).href)) as { migrate: (o: { connectionString: string }) => Promise<{ version: number }> };
      const r = await m.migrate({ connectionString: empty.url });
      expect(r).toMatchObject({ version: SCHEMA_VERSION });
    } finally {
      await empty.drop();
    }
  });
});

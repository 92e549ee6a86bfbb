// `workhorse migrate` on a schema with nothing to install still gives the
// runtime role its grants: a role created after the first migrate (by
// someone with CREATEROLE, as migration 008's WARNING asks), or grants
// revoked by hand, were given only when some file was installed, so the
// warning's "migrate again" changed nothing. It says so when it installs
// changed protocol files (it said "schema is up to date"), and it prints
// the WARNINGs PostgreSQL raised while migrating (it printed none).
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/index.js';
import { migrate } from '../../src/db/migrate.js';
import { findSqlDir } from '../../src/db/sqlFiles.js';
import { cliEnv, runCli } from '../cli/support/runCli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createRuntimeLogin, type RuntimeLogin } from '../helpers/runtimeLogin.js';

let db: TestDatabase;
let login: RuntimeLogin;

beforeAll(async () => {
  db = await createTestDatabase();
  login = await createRuntimeLogin(db.url, { prefix: 'wh_regrant' });
});

afterAll(async () => {
  await db?.drop();
  await login?.drop();
});

const runtimeReads = async (): Promise<unknown> => {
  const client = createClient({ connectionString: login.url, poolMax: 1 });
  try {
    return await client.getJob('1').then(() => 'ok', (e: unknown) => e);
  } finally {
    await client.close();
  }
};

describe('workhorse migrate with nothing to install', () => {
  it('gives the runtime role its grants again', async () => {
    await db.pool.query('revoke all on all tables in schema workhorse from workhorse_runtime; revoke usage on schema workhorse from workhorse_runtime');
    expect(await runtimeReads()).toMatchObject({ code: 'database_unavailable', cause: { code: '42501' } });
    const r = await runCli(['migrate'], cliEnv({ DATABASE_URL: db.url }));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^schema is up to date \(version \d+\)\n$/);
    expect(await runtimeReads()).toBe('ok');
  });

  it('says it installed the changed protocol functions, not that the schema is up to date', async () => {
    await db.pool.query(`update workhorse.protocol_state set checksum = 'an older release'`);
    const r = await runCli(['migrate'], cliEnv({ DATABASE_URL: db.url }));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^installed the changed protocol functions; schema version \d+\n$/);
  });
});

it("returns the WARNINGs PostgreSQL raised while migrating (migration 008's, when the runtime role is missing)", async () => {
  // A copy of sql/ with one more migration that warns, on a database of its own (it ends a version ahead).
  const dir = mkdtempSync(join(tmpdir(), 'wh-sql-'));
  const ahead = await createTestDatabase();
  try {
    cpSync(findSqlDir(), dir, { recursive: true });
    writeFileSync(join(dir, '099_warn.sql'), "do $$ begin raise warning 'workhorse test: act on this'; end $$;\n");
    const order = readFileSync(join(dir, 'ORDER'), 'utf8').split('\n');
    const last = order.findLastIndex((l) => /^\d{3}_/.test(l));
    order.splice(last + 1, 0, '099_warn.sql');
    writeFileSync(join(dir, 'ORDER'), order.join('\n'));
    const r = await migrate({ connectionString: ahead.url, sqlDir: dir });
    expect(r.applied).toContain(99);
    expect(r.warnings).toEqual(['workhorse test: act on this']);
  } finally {
    await ahead.drop();
    rmSync(dir, { recursive: true, force: true });
  }
});

// pg's native binding is left out of the Lambda bundles (infra/pgNativeStub.ts):
// a bundle built the way the construct builds them still connects and
// queries, `pg.native` is null in it as before (pg-native was never there),
// NODE_PG_FORCE_NATIVE still fails with MODULE_NOT_FOUND, the native client's
// code is gone, and a module of the app's own that happens to be called
// ./native is bundled as usual.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleLambdaEntry } from '../../infra/lambdaBundle.js';
import { findSqlDir } from '../../src/db/sqlFiles.js';
import { serverUrl } from '../helpers/db.js';

const dir = mkdtempSync(join(tmpdir(), 'wh-pg-native-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const pgMain = createRequire(import.meta.url).resolve('pg');
writeFileSync(join(dir, 'native.ts'), "export const own = 'the app’s own ./native';\n");
writeFileSync(
  join(dir, 'entry.ts'),
  [
    `import pg from ${JSON.stringify(pgMain)};`,
    "import { own } from './native';",
    'export const native = () => pg.native;',
    'export { own };',
    'export async function selectOne(connectionString: string): Promise<number> {',
    '  const client = new pg.Client({ connectionString });',
    '  await client.connect();',
    "  try { return (await client.query('select 1 as one')).rows[0].one; } finally { await client.end(); }",
    '}',
    '',
  ].join('\n'),
);
const outDir = join(dir, 'out');
bundleLambdaEntry({ entryFile: join(dir, 'entry.ts'), outDir, sqlDir: findSqlDir(), minify: true, sourceMap: false, external: [] });
const bundle = join(outDir, 'index.mjs');

describe('the bundle without pg’s native binding', () => {
  it('connects and queries, and pg.native is null', async () => {
    const m = (await import(pathToFileURL(bundle).href)) as { native: () => unknown; selectOne: (url: string) => Promise<number>; own: string };
    expect(m.native()).toBeNull();
    await expect(m.selectOne(serverUrl())).resolves.toBe(1);
    expect(m.own).toBe('the app’s own ./native');
  });

  it('carries the stub instead of the native client, which would require pg-native', () => {
    const code = readFileSync(bundle, 'utf8');
    // The native client's `require('pg-native')`, as the bundle writes it.
    expect(/\("pg-native"\)/.test(code)).toBe(false);
    expect(code.includes("Cannot find module 'pg-native'")).toBe(true);
  });

  it('fails to load with MODULE_NOT_FOUND under NODE_PG_FORCE_NATIVE, as a bundle without pg-native always did', () => {
    const probe = `try { await import(${JSON.stringify(pathToFileURL(bundle).href)}); console.log('loaded'); } catch (e) { console.log(e.code); }`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', probe], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', NODE_PG_FORCE_NATIVE: '1' } });
    expect(run.stdout.trim(), run.stderr).toBe('MODULE_NOT_FOUND');
  });
});

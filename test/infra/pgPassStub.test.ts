// pg's password-file lookup is left out of the Lambda bundles
// (infra/pgPassStub.ts): a bundle built the way the construct builds them
// still connects, without a password where the server allows it (the
// lookup's only possible answer in a function is "none"), the pgpass
// module's code is gone, and an app's own
// module that happens to be called pgpass is bundled as usual.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleLambdaEntry } from '../../infra/lambdaBundle.js';
import { findSqlDir } from '../../src/db/sqlFiles.js';
import { serverUrl } from '../helpers/db.js';

const dir = mkdtempSync(join(tmpdir(), 'wh-pgpass-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const pgMain = createRequire(import.meta.url).resolve('pg');
mkdirSync(join(dir, 'node_modules', 'pgpass'), { recursive: true });
writeFileSync(join(dir, 'node_modules', 'pgpass', 'package.json'), '{"name":"pgpass","main":"index.js"}');
writeFileSync(join(dir, 'node_modules', 'pgpass', 'index.js'), "module.exports = 'the app’s own pgpass';\n");
writeFileSync(
  join(dir, 'entry.ts'),
  [
    `import pg from ${JSON.stringify(pgMain)};`,
    "import own from 'pgpass';",
    'export { own };',
    'export async function whoAmI(connectionString: string): Promise<string> {',
    '  const client = new pg.Client({ connectionString });',
    '  await client.connect();',
    "  try { return (await client.query('select current_user as u')).rows[0].u; } finally { await client.end(); }",
    '}',
    '',
  ].join('\n'),
);
const outDir = join(dir, 'out');
bundleLambdaEntry({ entryFile: join(dir, 'entry.ts'), outDir, sqlDir: findSqlDir(), minify: true, sourceMap: false, external: [] });
const bundle = join(outDir, 'index.mjs');

describe('the bundle without pg’s password-file lookup', () => {
  it('connects, and the app’s own pgpass module is its own', async () => {
    // With no password in the URL (a server that trusts this client, as the
    // CI's does) pg asks the stub and connects without one; the embedded
    // server wants its password, which the URL then carries.
    const url = new URL(serverUrl());
    const m = (await import(pathToFileURL(bundle).href)) as { whoAmI: (url: string) => Promise<string>; own: string };
    await expect(m.whoAmI(url.toString())).resolves.toBe(decodeURIComponent(url.username) || 'postgres');
    expect(m.own).toBe('the app’s own pgpass');
  });

  it('carries the stub instead of pgpass, which reads PGPASSFILE', () => {
    const code = readFileSync(bundle, 'utf8');
    expect(code.includes('PGPASSFILE')).toBe(false);
  });
});

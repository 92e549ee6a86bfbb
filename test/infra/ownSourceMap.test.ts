// The bundles' source maps keep only the app's and workhorse's own code
// (infra/ownSourceMap.ts): an error thrown in a bundle, run by plain Node
// with --enable-source-maps as on Lambda, shows its own frames at their
// TypeScript file and line and a dependency's frame at the bundle's position.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleLambdaEntry } from '../../infra/lambdaBundle.js';
import { findSqlDir } from '../../src/db/sqlFiles.js';

const dir = mkdtempSync(join(tmpdir(), 'wh-sourcemap-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the bundle’s source map', () => {
  mkdirSync(join(dir, 'node_modules', 'fake-dep'), { recursive: true });
  writeFileSync(join(dir, 'node_modules', 'fake-dep', 'package.json'), JSON.stringify({ name: 'fake-dep', type: 'module', main: 'index.js' }));
  writeFileSync(join(dir, 'node_modules', 'fake-dep', 'index.js'), 'export function callWith(fn) {\n  return fn();\n}\n');
  writeFileSync(
    join(dir, 'entry.ts'),
    [
      "import { callWith } from 'fake-dep';",
      '',
      'export function handler(): string {',
      '  return callWith((): string => {',
      "    throw new Error('thrown on line 5');",
      '  });',
      '}',
      '',
    ].join('\n'),
  );
  const outDir = join(dir, 'out');
  bundleLambdaEntry({ entryFile: join(dir, 'entry.ts'), outDir, sqlDir: findSqlDir(), minify: true, sourceMap: true, external: [] });

  it('is the same, byte for byte, when the same code is bundled again (no temporary directory named in it)', () => {
    const again = join(dir, 'again');
    bundleLambdaEntry({ entryFile: join(dir, 'entry.ts'), outDir: again, sqlDir: findSqlDir(), minify: true, sourceMap: true, external: [] });
    const map = readFileSync(join(outDir, 'index.mjs.map'), 'utf8');
    expect(readFileSync(join(again, 'index.mjs.map'), 'utf8')).toBe(map);
    expect(readFileSync(join(again, 'index.mjs'), 'utf8')).toBe(readFileSync(join(outDir, 'index.mjs'), 'utf8'));
    expect(map).not.toMatch(/workhorse-bundle-/);
  });

  it('maps only the project’s own sources', () => {
    const payload = JSON.parse(readFileSync(join(outDir, 'index.mjs.map'), 'utf8'));
    expect(payload.sourcesContent).toBeUndefined();
    const map = new SourceMap(payload);
    const bundle = readFileSync(join(outDir, 'index.mjs'), 'utf8').split('\n');
    const mapped = new Set<string>();
    bundle.forEach((text, line) => {
      for (let column = 0; column < text.length; column += 7) {
        const e = map.findEntry(line, column) as { originalSource?: string };
        if (e.originalSource) mapped.add(e.originalSource);
      }
    });
    expect([...mapped].some((s) => s.endsWith('entry.ts'))).toBe(true);
    expect([...mapped].filter((s) => s.includes('node_modules'))).toEqual([]);
  });

  it('gives a stack trace with the own frames at file and line, the dependency’s in the bundle', () => {
    const run = spawnSync(
      process.execPath,
      ['--enable-source-maps', '--input-type=module', '-e', `const m = await import(${JSON.stringify(join(outDir, 'index.mjs'))}); try { m.handler(); } catch (e) { console.log(e.stack); }`],
      { encoding: 'utf8' },
    );
    expect(run.status, run.stderr).toBe(0);
    const frames = run.stdout.split('\n').filter((l) => l.trim().startsWith('at '));
    expect(frames[0]).toMatch(/entry\.ts:5:\d+/);
    expect(frames[1]).toMatch(/index\.mjs:\d+:\d+/);
    expect(frames[1]).not.toContain('node_modules');
    expect(frames[2]).toMatch(/entry\.ts:4:\d+/);
  });
});

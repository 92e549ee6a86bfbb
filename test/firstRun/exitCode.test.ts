// `npm test` must never report green on a failure. A small suite with one
// deliberately failing test runs through the suite's own database setup as
// a separate vitest process: its exit code is non-zero on the embedded path
// (DATABASE_URL unset) and on the external one (DATABASE_URL set).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { serverUrl } from '../helpers/db.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

const fixtureConfig = join(repoRoot, 'test', 'fixtures', 'failing-suite', 'vitest.config.ts');
/** The fixture's embedded data directory (see its globalSetup.ts). */
const fixtureDataDir = join(repoRoot, '.workhorse', 'exit-code-pg');

function runFixtureSuite(databaseUrl: string): Promise<{ code: number | null; output: string }> {
  // A clean environment for the inner vitest: none of this run's VITEST_* markers.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST')));
  const child = spawn(process.execPath, [join(repoRoot, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--config', fixtureConfig], {
    cwd: repoRoot,
    env: { ...env, DATABASE_URL: databaseUrl, NO_COLOR: '1', FORCE_COLOR: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('the test command exit code', () => {
  it('is non-zero when a test fails on the embedded server (DATABASE_URL unset)', async () => {
    const { code, output } = await runFixtureSuite('');
    expect(output).toMatch(/Tests\s+1 failed \| 1 passed/);
    expect(output).toContain('fails on purpose');
    // The setup started its own embedded server: a fresh port, the embedded credentials.
    const used = /fixture database: (\S+)/.exec(output)?.[1];
    expect(used).toMatch(/^postgres:\/\/postgres:postgres@127\.0\.0\.1:\d+\/postgres$/);
    expect(new URL(used!).port).not.toBe(new URL(serverUrl()).port);
    expect(code, output).toBe(1);
    // ... and stopped it again.
    expect(existsSync(join(fixtureDataDir, 'postmaster.pid'))).toBe(false);
  });

  it('is non-zero when a test fails against DATABASE_URL', async () => {
    const { code, output } = await runFixtureSuite(serverUrl());
    expect(output).toMatch(/Tests\s+1 failed \| 1 passed/);
    expect(/fixture database: (\S+)/.exec(output)?.[1]).toBe(serverUrl());
    expect(code, output).toBe(1);
  });
});

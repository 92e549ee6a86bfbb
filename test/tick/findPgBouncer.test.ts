// Where the pooler test finds PgBouncer, and what it says when it cannot:
// the PATH first, then the usual install directories; a missing program is
// an error naming it and how to install it, never a spawn EACCES.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findPgBouncer, PgBouncerNotFoundError } from './findPgBouncer.js';

const root = mkdtempSync(join(tmpdir(), 'wh-find-pgbouncer-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A directory holding a `pgbouncer` file with the given mode. */
function dirWith(name: string, mode: number | null): string {
  const dir = mkdtempSync(join(root, `${name}-`));
  if (mode !== null) {
    writeFileSync(join(dir, 'pgbouncer'), '#!/bin/sh\n');
    chmodSync(join(dir, 'pgbouncer'), mode);
  }
  return dir;
}

describe('findPgBouncer', () => {
  it('takes the first executable on PATH, before the install directories', () => {
    const empty = dirWith('empty', null);
    const onPath = dirWith('on-path', 0o755);
    const fallback = dirWith('fallback', 0o755);
    expect(findPgBouncer([empty, onPath].join(delimiter), [fallback])).toBe(join(onPath, 'pgbouncer'));
  });

  it('falls back to the install directories (Debian: /usr/sbin) when PATH has none', () => {
    const fallback = dirWith('sbin', 0o755);
    expect(findPgBouncer(dirWith('bin', null), [fallback])).toBe(join(fallback, 'pgbouncer'));
  });

  it('skips a pgbouncer file that is not executable', () => {
    const notExecutable = dirWith('noexec', 0o644);
    const fallback = dirWith('usr-bin', 0o755);
    expect(findPgBouncer(notExecutable, [fallback])).toBe(join(fallback, 'pgbouncer'));
  });

  it('fails with a message naming the missing program and how to install it', () => {
    const nowhere = dirWith('nowhere', null);
    let error: unknown;
    try {
      findPgBouncer(nowhere, []);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(PgBouncerNotFoundError);
    const message = (error as Error).message;
    expect(message).toMatch(/^PgBouncer is not installed/);
    expect(message).toContain('apt-get install pgbouncer');
    expect(message).toContain('brew install pgbouncer');
    expect(message).toContain(nowhere);
    expect(message).not.toMatch(/EACCES|ENOENT/);
  });
});

// When the embedded PostgreSQL cannot start, the error's first line (all the
// CLI shows: `workhorse demo: <first line>`) says why. It ended in a colon,
// the server's reason on the lines below it: a second demo started on the
// data directory of one still running printed
// `workhorse demo: the embedded PostgreSQL exited at start:` and no more.
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/db/embedded.js';
import { serverLogReason } from '../../src/db/serverLogReason.js';
import { EmbeddedPostgresError } from '../../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'wh-embedded-twice-'));
// As root the server runs as the postgres user, who must reach the data directory.
chmodSync(dir, 0o755);
let first: EmbeddedPostgres | undefined;

afterAll(async () => {
  await first?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('an embedded PostgreSQL that cannot start', () => {
  it('says why on its first line: a second server on a data directory in use', async () => {
    const dataDir = join(dir, 'pg');
    first = await startEmbeddedPostgres({ dataDir });
    const err = await startEmbeddedPostgres({ dataDir }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmbeddedPostgresError);
    const firstLine = (err as Error).message.split('\n')[0]!;
    expect(firstLine).toMatch(/^the embedded PostgreSQL exited at start: lock file "postmaster\.pid" already exists \(Is another postmaster \(PID \d+\) running in data directory/);
  }, 120_000);

  it('says why on its first line: a data directory the server cannot reach', async () => {
    // Root creates the directory and initdb, run as the postgres user, cannot reach it; anyone else cannot create it.
    const hidden = join(dir, 'hidden');
    mkdirSync(hidden, { mode: 0o000 });
    const err = await startEmbeddedPostgres({ dataDir: join(hidden, 'pg') }).catch((e: unknown) => e);
    const firstLine = (err as Error).message.split('\n')[0]!;
    if (process.getuid?.() === 0) {
      expect(err).toBeInstanceOf(EmbeddedPostgresError);
      expect(firstLine).toMatch(/^initdb failed \(exit 1\) for .*: could not access directory ".*": Permission denied$/);
    } else {
      expect(firstLine).toMatch(/EACCES|permission denied/i);
    }
  }, 120_000);

  it('reads the reason and its hint from a log tail, or its last line', () => {
    const tail = [
      '2026-12-07 19:00:00.000 UTC [8441] LOG:  starting PostgreSQL 15',
      '2026-12-07 19:00:00.001 UTC [8442] FATAL:  lock file "postmaster.pid" already exists',
      '2026-12-07 19:00:00.001 UTC [8442] HINT:  Is another postmaster (PID 8441) running in data directory "/x"?',
    ].join('\n');
    expect(serverLogReason(tail)).toBe('lock file "postmaster.pid" already exists (Is another postmaster (PID 8441) running in data directory "/x"?)');
    expect(serverLogReason('initdb: error: could not access directory "/p/pg": Permission denied\n')).toBe('could not access directory "/p/pg": Permission denied');
    expect(serverLogReason('something odd\nthe last words\n')).toBe('the last words');
    expect(serverLogReason('')).toBe('no reason in its log');
  });
});

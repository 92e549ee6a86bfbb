// Finds the PgBouncer executable the way a user's shell would: the PATH
// first, then the usual install locations (Debian puts it in /usr/sbin,
// which an ordinary user's PATH often lacks). When there is none, the error
// names the program and how to install it: a missing PgBouncer fails the
// pooler test loudly, never as a skip and never as a spawn error.
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export const PGBOUNCER_FALLBACK_DIRS = ['/usr/sbin', '/usr/bin', '/usr/local/bin', '/usr/local/sbin', '/opt/homebrew/bin'];

export class PgBouncerNotFoundError extends Error {
  constructor(searched: string[]) {
    super(
      'PgBouncer is not installed: test/tick/pgbouncer.test.ts runs a tick through a real PgBouncer. ' +
        'Install it (Debian/Ubuntu: `apt-get install pgbouncer`; macOS: `brew install pgbouncer`) or put `pgbouncer` on PATH. ' +
        `Looked in: ${searched.join(', ')}`,
    );
    this.name = 'PgBouncerNotFoundError';
  }
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The absolute path of `pgbouncer`, searched in `pathVariable`'s directories, then `fallbackDirs`. */
export function findPgBouncer(pathVariable = process.env.PATH ?? '', fallbackDirs = PGBOUNCER_FALLBACK_DIRS): string {
  const dirs = [...new Set([...pathVariable.split(delimiter).filter(Boolean), ...fallbackDirs])];
  for (const dir of dirs) {
    const candidate = join(dir, 'pgbouncer');
    if (isExecutableFile(candidate)) return candidate;
  }
  throw new PgBouncerNotFoundError(dirs);
}

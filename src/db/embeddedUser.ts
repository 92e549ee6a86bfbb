// Who the embedded PostgreSQL runs as. PostgreSQL refuses to run as root
// (initdb and postgres both exit), so under root it runs as the `postgres`
// user, created when the machine has none, and owns its data directory.
// Any other user runs it as themselves.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { EmbeddedPostgresError } from '../errors.js';

const run = promisify(execFile);

export interface ServerUser {
  uid: number;
  gid: number;
}

export function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

async function lookup(name: string): Promise<ServerUser | undefined> {
  try {
    const [uid, gid] = await Promise.all([run('id', ['-u', name]), run('id', ['-g', name])]);
    return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  } catch {
    return undefined;
  }
}

/** undefined: run as this process's user. As root: the postgres user's ids. */
export async function serverUser(): Promise<ServerUser | undefined> {
  if (!isRoot()) return undefined;
  const existing = await lookup('postgres');
  if (existing) return existing;
  try {
    await run('useradd', ['--system', '--user-group', '--no-create-home', 'postgres']);
  } catch (err) {
    throw new EmbeddedPostgresError(
      'running as root, and there is no `postgres` user for PostgreSQL to run as (it refuses root); ' +
        'create one (`useradd --system --user-group postgres`) or run as an ordinary user',
      { cause: err },
    );
  }
  const created = await lookup('postgres');
  if (!created) throw new EmbeddedPostgresError('created the `postgres` user but cannot read its ids (`id -u postgres`)');
  return created;
}

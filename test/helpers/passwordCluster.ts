// A PostgreSQL cluster owned by one test file, with scram-sha-256 password
// authentication on 127.0.0.1, so that a changed password really refuses a
// login (the shared test server trusts 127.0.0.1), and a cluster-wide role
// can be created or left out without touching the shared server. initdb and
// postgres are the embedded server's binaries, run as its user (the postgres
// user under root). A free port, a temp directory; stop() removes both.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { findPostgresBinaries } from '../../src/db/embeddedBinaries.js';
import { serverUser } from '../../src/db/embeddedUser.js';
import { freePort } from '../../src/db/freePort.js';

export interface PasswordCluster {
  port: number;
  /** A URL for `user:password` on `database` (default: the superuser on postgres). */
  url(database?: string, user?: string, password?: string): string;
  /** Runs statements as the superuser on `database`. */
  admin(sql: string, database?: string): Promise<pg.QueryResult>;
  stop(): Promise<void>;
}

const SUPERUSER_PASSWORD = 'cluster-superuser-password';




export async function startPasswordCluster(): Promise<PasswordCluster> {
  const binaries = await findPostgresBinaries();
  const user = await serverUser();
  const dir = mkdtempSync(join(tmpdir(), 'wh-pwcluster-'));
  chmodSync(dir, 0o755);
  const data = join(dir, 'data');
  mkdirSync(data, { mode: 0o700 });
  const pwfile = join(dir, 'pwfile');
  writeFileSync(pwfile, `${SUPERUSER_PASSWORD}\n`, { mode: 0o600 });
  if (user) for (const p of [dir, data, pwfile]) chownSync(p, user.uid, user.gid);

  const init = spawnSync(
    binaries.initdb,
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
    binaries.postgres,
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

// Starts a real PgBouncer in transaction pooling mode in front of the test
// server, on a free port with a generated ini in a temp directory, and stops
// it. The executable is found by findPgBouncer.ts (a clear error when it is
// not installed). PgBouncer refuses to run as root, so under root it runs as
// the `postgres` user, as the embedded server does.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { serverUser } from '../../src/db/embeddedUser.js';
import { freePort } from '../../src/db/freePort.js';
import { findPgBouncer } from './findPgBouncer.js';

export interface Bouncer {
  /** `databaseUrl` with host and port swapped for the bouncer's. */
  url(databaseUrl: string): string;
  /** The admin console (SHOW POOLS, SHOW CONFIG, ...). */
  adminUrl: string;
  log(): string;
  stop(): Promise<void>;
}



export async function startPgBouncer(serverUrl: string, poolSize = 2): Promise<Bouncer> {
  // An absolute path: no PATH lookup as another user, so "not installed" is never reported as EACCES.
  const pgbouncer = findPgBouncer();
  const runAs = await serverUser();
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username || 'postgres');
  const password = decodeURIComponent(server.password);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'wh-pgbouncer-'));
  chmodSync(dir, 0o777);
  const ini = join(dir, 'pgbouncer.ini');
  const target = [`host=${server.hostname}`, `port=${server.port || 5432}`, `user=${user}`, password ? `password=${password}` : '']
    .filter(Boolean)
    .join(' ');
  writeFileSync(
    ini,
    [
      '[databases]',
      `* = ${target}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      `admin_users = ${user}`,
      'pool_mode = transaction',
      `default_pool_size = ${poolSize}`,
      'max_client_conn = 200',
      'ignore_startup_parameters = extra_float_digits',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      `pidfile = ${join(dir, 'pgbouncer.pid')}`,
      '',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'userlist.txt'), `"${user}" ""\n`);
  for (const f of ['pgbouncer.ini', 'userlist.txt']) chmodSync(join(dir, f), 0o644);

  let output = '';
  const child: ChildProcess = spawn(pgbouncer, [ini], { stdio: ['ignore', 'pipe', 'pipe'], ...runAs });
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  let spawnError: Error | undefined;
  const exited = new Promise<void>((resolve) => {
    child.on('exit', () => resolve());
    child.on('error', (err) => {
      spawnError = err;
      resolve();
    });
  });
  const log = () => output + (existsSync(join(dir, 'pgbouncer.log')) ? readFileSync(join(dir, 'pgbouncer.log'), 'utf8') : '');
  const bouncerUrl = (databaseUrl: string) => {
    const u = new URL(databaseUrl);
    u.hostname = '127.0.0.1';
    u.port = String(port);
    u.password = '';
    return u.toString();
  };
  const adminUrl = bouncerUrl(`postgres://${encodeURIComponent(user)}@x/pgbouncer`);

  const stop = async () => {
    if (!spawnError && child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };

  // Ready once a query goes through.
  const started = Date.now();
  for (;;) {
    if (spawnError) {
      rmSync(dir, { recursive: true, force: true });
      const as = runAs ? ' as an unprivileged user (PgBouncer refuses root)' : '';
      throw new Error(`could not start ${pgbouncer}${as}: ${spawnError.message}`);
    }
    if (child.exitCode !== null) {
      const l = log();
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`pgbouncer exited at start:\n${l}`);
    }
    const c = new pg.Client({ connectionString: bouncerUrl(serverUrl) });
    c.on('error', () => undefined);
    try {
      await c.connect();
      await c.query('select 1');
      await c.end();
      break;
    } catch {
      await c.end().catch(() => undefined);
      if (Date.now() - started > 15_000) {
        await stop();
        throw new Error(`pgbouncer did not accept connections within 15 s:\n${log()}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { url: bouncerUrl, adminUrl, log, stop };
}

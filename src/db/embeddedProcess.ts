// Runs the embedded PostgreSQL server as a child whose life is bound to this
// process. PostgreSQL does not notice its parent dying, so it runs under a
// tiny watchdog (a Node process) that holds a pipe from us: when the pipe
// closes, because we called stop(), exited normally, crashed or were
// SIGKILLed, the watchdog asks the server for a fast shutdown. Once the
// server is up the caller unref()s it, so a forgotten stop() never keeps
// this process alive. Nothing here touches this process's exit code or
// signal handlers.
import { spawn, type ChildProcess } from 'node:child_process';
import type { ServerUser } from './embeddedUser.js';

/**
 * The watchdog's source (CommonJS, run with `node -e`). Its argument is
 * `[binary, args, user]`. Closing its stdin means a fast shutdown (SIGINT);
 * a SIGTERM means an immediate one (SIGQUIT). It exits with the server.
 */
const WATCHDOG = `
const { spawn } = require('node:child_process');
const [bin, args, user] = JSON.parse(process.argv[1]);
const server = spawn(bin, args, { stdio: ['ignore', 'inherit', 'inherit'], ...(user || {}) });
const stop = (signal) => { if (server.exitCode === null && server.signalCode === null) server.kill(signal); };
process.stdin.on('end', () => stop('SIGINT')).on('error', () => stop('SIGINT')).resume();
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGHUP', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGQUIT'));
server.on('error', (err) => { console.error(String(err)); process.exit(127); });
server.on('exit', (code) => process.exit(code === null ? 1 : code));
`;

/** How long a fast shutdown may take before the server is told to stop immediately. */
const FAST_SHUTDOWN_MS = 15_000;

export interface WatchedProcess {
  /** The watchdog's pid (the server is its only child). */
  pid: number | undefined;
  /** Resolves with the exit code once the server (and its watchdog) have exited. */
  exited: Promise<number | null>;
  hasExited(): boolean;
  /** The server's last log lines, for error messages. */
  logTail(): string;
  /** Lets this process exit while the server runs (the server then stops with it). */
  unref(): void;
  /** Fast shutdown; immediate if it takes longer than 15 s. Resolves once the server has exited. */
  stop(): Promise<void>;
}

/** Starts `binary` (the server, or initdb) as `user` under the watchdog; its output lines go to `log`. */
export function spawnWatched(
  binary: string,
  args: string[],
  user: ServerUser | undefined,
  log: (line: string) => void,
): WatchedProcess {
  const child: ChildProcess = spawn(process.execPath, ['-e', WATCHDOG, JSON.stringify([binary, args, user ?? null])], {
    stdio: ['pipe', 'pipe', 'pipe'],
    windowsHide: true,
  });
  const tail: string[] = [];
  const onData = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line.trim()) continue;
      tail.push(line);
      if (tail.length > 40) tail.shift();
      log(line);
    }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  let done = false;
  const exited = new Promise<number | null>((resolve) => {
    child.on('exit', (code) => {
      done = true;
      resolve(code);
    });
    child.on('error', (err) => {
      done = true;
      tail.push(String(err));
      resolve(null);
    });
  });
  const streams = [child.stdin, child.stdout, child.stderr] as unknown as ({ ref(): void; unref(): void } | null)[];
  // Our exit (however it happens) closes the pipe; the watchdog does the rest.
  const unref = () => {
    child.unref();
    for (const s of streams) s?.unref();
  };

  const stop = async () => {
    if (done) return;
    // Keep this process alive until the server has gone.
    child.ref();
    for (const s of streams) s?.ref();
    child.stdin!.end();
    const timer = setTimeout(() => child.kill('SIGTERM'), FAST_SHUTDOWN_MS);
    try {
      await exited;
    } finally {
      clearTimeout(timer);
    }
  };
  return { pid: child.pid, exited, hasExited: () => done, logTail: () => tail.join('\n'), unref, stop };
}

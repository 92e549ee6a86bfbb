// `workhorse serve` as a child process, for tests that need the real
// command (its environment parsing, its pool, its signals): started on a
// free port with the test app, resolved once it prints its address, and
// everything it writes kept for assertions and failure messages.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../src/db/freePort.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

export interface ServeProcess {
  child: ChildProcess;
  baseUrl: string;
  /** Everything the process wrote so far, stdout and stderr. */
  output(): string;
}

/**
 * Starts `workhorse serve --app <app>` (the HTTP tests' app unless given)
 * with `env` over the test process's own; no signing secret and no app
 * variable unless given.
 */
export async function startServeProcess(env: Record<string, string>, app = 'test/http/fixtures/app.ts'): Promise<ServeProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--port', String(port), '--app', app], {
    cwd: root,
    env: { ...process.env, WORKHORSE_SIGNING_SECRET: '', WORKHORSE_APP: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += String(d)));
  child.stderr!.on('data', (d) => (output += String(d)));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${output}`)), 30_000);
    const check = () => {
      const m = /listening on (http:\/\/[^\s]+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      } else if (child.exitCode !== null) {
        clearTimeout(timer);
        reject(new Error(`serve exited with ${child.exitCode}:\n${output}`));
      } else setTimeout(check, 50);
    };
    check();
  });
  return { child, baseUrl, output: () => output };
}

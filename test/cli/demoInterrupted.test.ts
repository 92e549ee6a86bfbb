// `workhorse demo` interrupted with Ctrl-C mid-story, run from a directory
// outside the checkout: its worker processes start there too (they load tsx
// as the CLI resolves it, not from the working directory, where it was not
// found), and once the demo's database goes away with it (as the embedded
// one does on Ctrl-C; here a proxy in front of the test's database closes)
// the workers leave without a line of "heartbeat failed ... ECONNREFUSED",
// even one from a fault in the moment before the signal reached them.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TcpProxy } from '../../certify/tcpProxy.js';
import { createEmptyDatabase } from '../helpers/db.js';
import { BIN, cliEnv } from './support/runCli.js';

let db: Awaited<ReturnType<typeof createEmptyDatabase>>;
let elsewhere: string;

beforeAll(async () => {
  db = await createEmptyDatabase();
  elsewhere = mkdtempSync(join(tmpdir(), 'wh-demo-cwd-'));
});

afterAll(async () => {
  await db?.drop();
  if (elsewhere) rmSync(elsewhere, { recursive: true, force: true });
});

describe('workhorse demo interrupted mid-story, run from another directory', () => {
  // Paced, interrupted at step 3; unpaced (a 1.6 s lease), at step 2, while the
  // handlers run: their leases run out during the workers' 2 s drain, and a
  // "lost its lease" line was printed for each.
  it.each([
    ['paced, at step 3', ['--pace-ms', '200'], '\n3. '],
    ['unpaced, at step 2', [], '\n2. '],
  ])('runs its workers, and they leave quietly once its database is gone (%s)', { timeout: 60_000 }, async (_what, pace, step) => {
    const target = new URL(db.url);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    const url = new URL(db.url);
    url.port = String(await proxy.start());
    const demo = spawn(process.execPath, [BIN, 'demo', ...pace], {
      cwd: elsewhere,
      env: cliEnv({ DATABASE_URL: url.toString() }),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    let err = '';
    demo.stdout!.on('data', (d) => (out += String(d)));
    demo.stderr!.on('data', (d) => (err += String(d)));
    const exited = new Promise<void>((resolve) => demo.on('exit', () => resolve()));
    try {
      const deadline = Date.now() + 40_000;
      while (!out.includes(step) && demo.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(out, err).toContain(step);
      // Ctrl-C reaches the whole process group, and the database goes with it.
      // The database may go a moment before the signal reaches a worker: a
      // claim or heartbeat in that moment fails, and is not news either.
      proxy.dropAll();
      await proxy.close();
      await new Promise((r) => setTimeout(r, 400));
      process.kill(-demo.pid!, 'SIGINT');
      await exited;
      // The workers' stderr is the demo's: give any line of theirs time to arrive.
      await new Promise((r) => setTimeout(r, 2_000));
      expect(err).not.toMatch(/ERR_MODULE_NOT_FOUND|Cannot find package 'tsx'/);
      expect(err).not.toMatch(/\[workhorse\] worker w\d/);
    } finally {
      try {
        process.kill(-demo.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
      await proxy.close().catch(() => undefined);
    }
  });
});

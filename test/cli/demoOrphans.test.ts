// `workhorse demo` runs its workers as child processes; none may outlive
// it, however it ends. SIGKILLed mid-story (no finally runs, as when its
// stdout is closed and it dies of EPIPE), its workers notice their stdin
// close, drain and exit.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmptyDatabase } from '../helpers/db.js';
import { cliEnv, startCli } from './support/runCli.js';

let db: Awaited<ReturnType<typeof createEmptyDatabase>>;

beforeAll(async () => {
  db = await createEmptyDatabase();
});

afterAll(async () => {
  await db?.drop();
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('workhorse demo killed mid-story', () => {
  it('leaves no worker process behind', { timeout: 60_000 }, async () => {
    const demo = startCli(['demo', '--pace-ms', '10'], cliEnv({ DATABASE_URL: db.url }));
    let out = '';
    demo.stdout!.on('data', (d) => (out += String(d)));
    let children: number[] = [];
    try {
      const deadline = Date.now() + 40_000;
      while (!out.includes('\n2. ') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(out).toContain('\n2. ');
      children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(demo.pid)], { encoding: 'utf8' }).split('\n').map((l) => Number(l.trim())).filter((n) => n > 0);
      expect(children.length).toBeGreaterThanOrEqual(3);
      demo.kill('SIGKILL');
      const gone = Date.now() + 20_000;
      while (children.some(alive) && Date.now() < gone) await new Promise((r) => setTimeout(r, 100));
      expect(children.filter(alive)).toEqual([]);
    } finally {
      if (demo.exitCode === null) demo.kill('SIGKILL');
      for (const pid of children.filter(alive)) process.kill(pid, 'SIGKILL');
    }
  });
});

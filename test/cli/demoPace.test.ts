// `workhorse demo --ui --pace-ms N` announces the pause it will make: a
// pace under a second is printed in milliseconds, not rounded to "0 s" or
// "1 s", and a longer one in seconds as given (1500 is "1.5 s").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmptyDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';
import { cliEnv, startCli } from './support/runCli.js';

let db: Awaited<ReturnType<typeof createEmptyDatabase>>;

beforeAll(async () => {
  db = await createEmptyDatabase();
});

afterAll(async () => {
  await db?.drop();
});

describe('workhorse demo --ui --pace-ms', () => {
  it.each([
    ['400', 'the story starts in 400 ms and pauses 400 ms after each step'],
    ['1500', 'the story starts in 1.5 s and pauses 1.5 s after each step'],
  ])('--pace-ms %s prints "%s"', async (pace, line) => {
    const child = startCli(['demo', '--ui', '--port', '0', '--pace-ms', pace], cliEnv({ DATABASE_URL: db.url }));
    let stdout = '';
    child.stdout!.on('data', (d) => (stdout += String(d)));
    const exited = new Promise((resolve) => child.on('exit', resolve));
    try {
      await waitFor(() => stdout, (s) => /the story starts in [^\n]*\n/.test(s), { timeoutMs: 30_000, what: 'the pace line' });
      expect(/the story starts in [^\n]*/.exec(stdout)![0]).toBe(line);
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
  }, 40_000);
});

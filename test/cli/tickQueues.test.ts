// `workhorse tick --queue Q` (and WORKHORSE_QUEUES) with a queue that holds
// no job type of the app: the real executable warns on stderr, naming the
// queue and the queues the app's jobs and schedules use, and still exits 0
// (the tick ran; an empty queue is not an error). A queue the app uses, or
// sys (the built-in slots), runs without the warning.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { cliEnv, runCli } from './support/runCli.js';

const APP = 'test/fixtures/tick-app.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const tick = (args: string[], env: Record<string, string> = {}) =>
  runCli(['tick', APP, '--budget-ms', '5000', ...args], cliEnv({ DATABASE_URL: db.url, ...env }), undefined, 60_000);

describe('workhorse tick on a queue the app does not use', () => {
  it('warns on stderr naming the queue and the app queues, and exits 0 with the summary', async () => {
    const r = await tick(['--queue', 'nope']);
    expect(r.code).toBe(0);
    expect(r.stderr.trim()).toBe(
      'workhorse tick: warning: queue "nope" is the queue of no job type of this app: the tick claims there only jobs enqueued with that queue given (options.queue) (the app\'s jobs and schedules use "default", "sys")',
    );
    expect(JSON.parse(r.stdout.trim().split('\n').at(-1)!)).toMatchObject({ claimed: 0 });
  });

  it('names only the unknown ones of several, from WORKHORSE_QUEUES too', async () => {
    const r = await tick(['--queue', 'default', '--queue', 'nope', '--queue', 'emails']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/warning: queues "nope", "emails" are the queues of no job type of this app: .*"default", "sys"/);
    const fromEnv = await tick([], { WORKHORSE_QUEUES: 'nope' });
    expect(fromEnv.code).toBe(0);
    expect(fromEnv.stderr).toMatch(/warning: queue "nope" is the queue of no job type/);
  });

  it('says nothing for the app queues, sys, or no --queue at all', async () => {
    for (const args of [[], ['--queue', 'default'], ['--queue', 'default', '--queue', 'sys']]) {
      const r = await tick(args);
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
    }
  });
});

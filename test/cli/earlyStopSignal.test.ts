// A stop signal that reaches `workhorse tick` or `workhorse worker` before
// its work has started (its module still loading, the tick's schema check
// waiting) ends it with exit 0 and one line saying so. Before, the
// handlers were installed only once the module had loaded (and, for the
// tick, the schema was checked): a signal in that window ended the process
// by the signal (exit 143, 130 or 129) with nothing on stdout or stderr.
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { createEmptyDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';
import { cliEnv, startCli } from './support/runCli.js';

const SLOW = fileURLToPath(new URL('../fixtures/slowLoadingModule.ts', import.meta.url));
const APP = fileURLToPath(new URL('../fixtures/stubborn-app.ts', import.meta.url));

let db: Awaited<ReturnType<typeof createEmptyDatabase>>;

beforeAll(async () => {
  db = await createEmptyDatabase();
  await migrate({ connectionString: db.url });
});
afterAll(async () => {
  await db?.drop();
});

function start(args: string[], env: Record<string, string> = {}) {
  const child = startCli(args, cliEnv({ DATABASE_URL: db.url, ...env }));
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  child.stderr!.on('data', (d) => (err += String(d)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => setImmediate(() => resolve({ code, signal }))),
  );
  return { child, exited, out: () => out, err: () => err };
}

const stderrLines = (err: string) => err.trimEnd().split('\n').filter((l) => l !== '[fixture] loading');

describe('a stop signal before the work has started', () => {
  it.each([
    ['tick', 'SIGTERM', 'the tick'],
    ['tick', 'SIGINT', 'the tick'],
    ['tick', 'SIGHUP', 'the tick'],
    ['worker', 'SIGTERM', 'the workers'],
    ['worker', 'SIGINT', 'the workers'],
    ['worker', 'SIGHUP', 'the workers'],
  ] as const)('workhorse %s given %s while its module loads exits 0, saying it stopped before %s started', async (command, signal, what) => {
    const args = command === 'tick' ? ['tick', SLOW, '--budget-ms', '60000'] : ['worker', SLOW];
    // The tick's module is an app; the worker's a worker process definition on a database that is never reached.
    const module = command === 'tick' ? './stubborn-app.ts' : './workerCliProcess.ts';
    const config = JSON.stringify({ url: 'postgres://postgres@127.0.0.1:1/none', mode: 'work', workMs: 0 });
    const p = start(args, { SLOW_LOADING_MODULE: module, FIXTURE_CONFIG: config });
    await waitFor(() => p.err(), (e) => e.includes('[fixture] loading'), { what: 'the module loading', timeoutMs: 30_000 });
    p.child.kill(signal);
    const { code, signal: killedBy } = await p.exited;
    expect({ code, killedBy }, p.err()).toEqual({ code: 0, killedBy: null });
    expect(stderrLines(p.err())).toEqual([`[workhorse] ${signal} before ${what} started: exiting 0`]);
    expect(p.out()).toBe('');
  }, 40_000);

  it('workhorse tick given SIGTERM during its schema check exits 0, claiming and registering nothing', async () => {
    // The check waits for a lock the test holds on workhorse.migrations.
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    try {
      await locker.query('begin; lock table workhorse.migrations in access exclusive mode');
      const p = start(['tick', APP, '--budget-ms', '60000']);
      await waitFor(
        () => locker.query(`select 1 from pg_locks where relation = 'workhorse.migrations'::regclass and not granted`),
        (r) => r.rowCount === 1,
        { what: 'the schema check waiting for the lock', timeoutMs: 30_000 },
      );
      p.child.kill('SIGTERM');
      const { code, signal } = await p.exited;
      expect({ code, signal }, p.err()).toEqual({ code: 0, signal: null });
      expect(stderrLines(p.err())).toEqual(['[workhorse] SIGTERM before the tick started: exiting 0']);
      expect(p.out()).toBe('');
      await locker.query('rollback');
      expect((await locker.query('select 1 from workhorse.worker_registry')).rowCount).toBe(0);
    } finally {
      await locker.end();
    }
  }, 40_000);
});

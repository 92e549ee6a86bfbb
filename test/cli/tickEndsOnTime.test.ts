// `workhorse tick --budget-ms N` ends its process near its budget even when
// a handler ignores its abort signal. The tick itself returned on time (its
// summary printed, the cut-off job retried), but the handler's timer kept
// Node's event loop alive: the process exited 20 s later, so a cron line
// could start the next tick beside a still-running handler. The process is
// now ended a second after the command returns, saying why.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/index.js';
import { migrate } from '../../src/db/migrate.js';
import { StubbornJob } from '../fixtures/stubborn-app.js';
import { createEmptyDatabase } from '../helpers/db.js';
import { cliEnv, runCli } from './support/runCli.js';

let db: Awaited<ReturnType<typeof createEmptyDatabase>>;
let client: Client;

beforeAll(async () => {
  db = await createEmptyDatabase();
  await migrate({ connectionString: db.url });
  client = createClient({ connectionString: db.url, jobs: [StubbornJob], poolMax: 2 });
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

describe('workhorse tick with a handler that ignores its abort signal', () => {
  it('prints its summary by its budget and its process ends a second later, not when the handler does', async () => {
    await client.enqueue(StubbornJob, { ms: 40_000 });
    const started = Date.now();
    const r = await runCli(['tick', 'test/fixtures/stubborn-app.ts', '--database-url', db.url, '--budget-ms', '3000'], cliEnv(), undefined, 50_000);
    const tookMs = Date.now() - started;
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim().split('\n').at(-1)!)).toMatchObject({ claimed: 1, retried: 1 });
    expect(r.stderr).toMatch(/\[workhorse\] exiting 0: work was still running in this process 1000 ms after the command ended/);
    // The process start (tsx, slow on a busy machine) plus the budget plus the second of grace, far from the handler's 40 s.
    expect(tookMs).toBeLessThan(25_000);
  }, 60_000);
});

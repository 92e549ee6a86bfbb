// A handler whose result PostgreSQL refuses to store (a string over jsonb's
// 256 MiB limit), in a real `workhorse worker` process: the job fails for
// good after its one run, with a ValidationError saying why, instead of its
// lease being dropped and recovered ("lost its lease") and the
// handler run again on every attempt. The process carries on and drains.
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, type Client } from '../../src/index.js';
import { createRunLog } from '../fixtures/spawnWorker.js';
import { cliEnv, startCli } from '../cli/support/runCli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { sleep, waitFor } from '../helpers/wait.js';

// The fixture's job, as the enqueuing side defines it.
const BuildReport = defineJob({ type: 'report.build', queue: 'reports', schema: z.object({}), retry: { maxAttempts: 3 } });
const FIXTURE = fileURLToPath(new URL('../fixtures/hugeResultProcess.ts', import.meta.url));

let db: TestDatabase;
let client: Client;
let child: ChildProcess | undefined;

beforeAll(async () => {
  db = await createTestDatabase();
  await createRunLog(db.pool);
  client = createClient({ connectionString: db.url, jobs: [BuildReport], poolMax: 2 });
});

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await client?.close();
  await db?.drop();
});

describe('a result the database cannot store', () => {
  it('fails the job once, for good, with a ValidationError, and the worker drains on SIGTERM', async () => {
    child = startCli(['worker', FIXTURE], cliEnv({ FIXTURE_CONFIG: JSON.stringify({ url: db.url }) }));
    let out = '';
    child.stdout!.on('data', (d) => (out += String(d)));
    child.stderr!.on('data', (d) => (out += String(d)));
    const exited = new Promise<number | null>((resolve) => child!.on('exit', (code) => resolve(code)));
    await waitFor(() => out, (o) => o.includes('worker(s) running'), { timeoutMs: 30_000, what: 'the worker to start' });

    const { id } = await client.enqueue(BuildReport, {});
    const job = await waitFor(() => client.getJob(id), (j) => j?.status === 'failed', { timeoutMs: 90_000, what: `job ${id} to fail` });
    expect(job!.lastError, out).toMatchObject({ name: 'ValidationError' });
    expect(String((job!.lastError as { message?: string }).message)).toMatch(/cannot store/);
    // Give a recovered lease (800 ms) the time to come back, had it been left to recovery.
    await sleep(2_000);
    const runs = await db.pool.query('select execution from fx_runs where job_id = $1', [id]);
    expect(runs.rowCount, out).toBe(1);
    expect(out).not.toMatch(/lost its lease|lease expired/);

    child.kill('SIGTERM');
    expect(await exited, out).toBe(0);
  }, 120_000);
});

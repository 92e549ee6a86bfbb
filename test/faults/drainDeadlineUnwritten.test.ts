// `workhorse worker` stopped at its drain deadline while a finished
// handler's outcome could not be written (the database froze under it):
// the last line counts that outcome as given up, beside the running jobs.
// It said "0 running job(s) left to recovery" and the success was dropped
// without a word (recovery then counted an attempt; a job of maxAttempts 1
// ended failed).
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClient } from '../../src/index.js';
import { cliEnv, startCli } from '../cli/support/runCli.js';
import { SendEmail } from '../fixtures/emailJob.js';
import { createRunLog } from '../fixtures/spawnWorker.js';
import { createProxiedDatabase, type ProxiedDatabase } from '../helpers/proxiedDatabase.js';
import { sleep, waitFor } from '../helpers/wait.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/workerCliProcess.ts', import.meta.url));
let pdb: ProxiedDatabase;
let child: ChildProcess | undefined;

beforeAll(async () => {
  pdb = await createProxiedDatabase();
  await createRunLog(pdb.db.pool);
});

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await pdb?.close();
});

it('says at the drain deadline that a finished job\'s outcome was not written, not only "0 running job(s)"', async () => {
  child = startCli(['worker', FIXTURE], cliEnv({ FIXTURE_CONFIG: JSON.stringify({ url: pdb.url, mode: 'work', workMs: 1_000, drainTimeoutMs: 2_000 }) }));
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  child.stderr!.on('data', (d) => (out += String(d)));
  const exited = new Promise<number | null>((resolve) => child!.on('exit', (code) => resolve(code)));
  await waitFor(() => /probes on /.test(out), Boolean, { timeoutMs: 30_000, what: 'the worker to start' });
  const client = createClient({ connectionString: pdb.db.url, jobs: [SendEmail] });
  try {
    const { id } = await client.enqueue(SendEmail, { to: 'ada@example.com' });
    await waitFor(async () => (await pdb.db.pool.query('select 1 from fx_runs where job_id = $1', [id])).rowCount, (n) => n === 1, { timeoutMs: 30_000, what: 'the handler to start' });
    // The handler returns in a second: its outcome meets a frozen connection.
    pdb.proxy.freeze();
    await sleep(1_500);
    child.kill('SIGTERM');
    expect(await exited).toBe(124);
    expect(out).toContain(
      'drain deadline (2000 ms) passed: exiting now (code 124); 0 running job(s) left to recovery once their leases run out, and 1 finished job(s) whose outcome was not written yet (recovery counts an attempt for each)',
    );
  } finally {
    await client.close();
  }
}, 60_000);

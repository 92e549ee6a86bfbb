// `workhorse tick` stops early on SIGTERM, SIGINT or SIGHUP: it claims no
// more, lets its running handlers finish, writes their outcomes,
// deregisters and prints its summary (exit 0); a second signal exits at
// once with 130. Before, the first signal killed it where it stood: its
// leases and registry row were left until they expired and the running
// job was charged an attempt by recovery.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/index.js';
import { migrate } from '../../src/db/migrate.js';
import { StubbornJob } from '../fixtures/stubborn-app.js';
import { createEmptyDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';
import { cliEnv, startCli } from './support/runCli.js';

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

function tick() {
  const child = startCli(['tick', 'test/fixtures/stubborn-app.ts', '--database-url', db.url, '--budget-ms', '60000', '--keep-polling', '--concurrency', '1'], cliEnv());
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  child.stderr!.on('data', (d) => (err += String(d)));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => setImmediate(() => r(code))));
  return { child, exited, out: () => out, err: () => err };
}

const running = (id: string) => waitFor(() => client.getJob(id), (j) => j?.status === 'running', { what: 'the job running', timeoutMs: 20_000 });

describe('workhorse tick told to stop', () => {
  it('lets the running handler finish, claims nothing more, deregisters and prints its summary: exit 0', async () => {
    const first = await client.enqueue(StubbornJob, { ms: 1500 });
    const t = tick();
    await running(first.id);
    const second = await client.enqueue(StubbornJob, { ms: 0 });
    t.child.kill('SIGTERM');
    const code = await t.exited;
    expect(code, t.err()).toBe(0);
    expect(t.err()).toMatch(/SIGTERM: the tick stops claiming/);
    expect(JSON.parse(t.out().trim().split('\n').at(-1)!)).toMatchObject({ claimed: 1, succeeded: 1 });
    expect(await client.getJob(first.id)).toMatchObject({ status: 'succeeded', attempt: 1 });
    expect(await client.getJob(second.id)).toMatchObject({ status: 'ready', attempt: 0 });
    expect((await client.pool.query('select 1 from workhorse.worker_registry')).rowCount).toBe(0);
    expect((await client.pool.query('select 1 from workhorse.job_runtime')).rowCount).toBe(0);
    await client.pool.query('delete from workhorse.jobs');
  }, 60_000);

  it('exits at once with 130 on a second signal, leaving the lease to recovery', async () => {
    const job = await client.enqueue(StubbornJob, { ms: 30_000 });
    const t = tick();
    await running(job.id);
    t.child.kill('SIGINT');
    await waitFor(() => t.err(), (e) => e.includes('SIGINT: the tick stops claiming'), { what: 'the stop line' });
    const sent = Date.now();
    t.child.kill('SIGINT');
    expect(await t.exited).toBe(130);
    expect(Date.now() - sent).toBeLessThan(5_000);
    expect(t.err()).toMatch(/SIGINT again: exiting 130/);
    expect(await client.getJob(job.id)).toMatchObject({ status: 'running' });
  }, 60_000);
});

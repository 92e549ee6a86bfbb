// workhorse installed from a checkout (`npm install ../workhorse`, which npm
// links): the application's `import 'workhorse'` loads the compiled dist/,
// and `workhorse worker app.js`, run through node_modules/.bin, used to run
// the CLI from the checkout's TypeScript sources, a second copy whose
// Worker refused the application's client ("a Worker needs the client
// createClient() returns"). Run as a dependency, the executable now runs
// the compiled CLI, the application's copy, and the worker runs its jobs.
// Inside the checkout itself, `node bin/workhorse.js worker app.js` (a
// compiled module whose `import 'workhorse'` is the package's own dist/)
// runs the compiled CLI too: it used to run the sources and refuse the
// module's client, leaving `npx workhorse`, which does not pass SIGTERM on,
// as the only way to run it. So does `node bin/workhorse.js --verbose worker
// app.js`: the option before the command hid it.
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';
import { cliEnv, compiledCli, ROOT, type CompiledCli } from './support/runCli.js';

const Ping = defineJob({ type: 'linked.ping', schema: z.object({}) });

const WORKER_MODULE = `import { z } from 'zod';
import { createClient, defineJob, defineWorkerProcess } from 'workhorse';
const Ping = defineJob({ type: 'linked.ping', schema: z.object({}) });
export default defineWorkerProcess({
  client: () => createClient({ connectionString: process.env.DATABASE_URL, jobs: [Ping] }),
  workers: [{ options: { concurrency: 1, pollMs: 100 }, configure: (w) => w.handle(Ping, () => 'pong') }],
});
`;

let db: TestDatabase;
let client: Client;
let checkout: CompiledCli;
let consumer: string;
let child: ChildProcess | undefined;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Ping], poolMax: 2 });
  // A checkout as a developer has it: sources, a built dist/, its node_modules (tsx included).
  checkout = await compiledCli();
  const root = dirname(dirname(checkout.bin));
  cpSync(join(ROOT, 'src'), join(root, 'src'), { recursive: true });
  // An application that installed it with `npm install <checkout>`.
  consumer = mkdtempSync(join(tmpdir(), 'wh-linked-'));
  mkdirSync(join(consumer, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(root, join(consumer, 'node_modules', 'workhorse'), 'dir');
  symlinkSync(join(ROOT, 'node_modules', 'zod'), join(consumer, 'node_modules', 'zod'), 'dir');
  symlinkSync('../workhorse/bin/workhorse.js', join(consumer, 'node_modules', '.bin', 'workhorse'));
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  writeFileSync(join(consumer, 'worker.js'), WORKER_MODULE);
  // And one inside the checkout, importing the package by its own name.
  mkdirSync(join(root, 'app'));
  writeFileSync(join(root, 'app', 'worker.js'), WORKER_MODULE);
});

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await client?.close();
  await db?.drop();
  checkout?.remove();
  if (consumer) rmSync(consumer, { recursive: true, force: true });
});

/** Runs `args` with node in `cwd`, enqueues a Ping, waits for it to succeed, then SIGTERMs the worker: its exit code and output. */
async function runsAndDrains(args: string[], cwd: string): Promise<{ code: number | null; out: string }> {
  const c = spawn(process.execPath, args, { cwd, env: cliEnv({ DATABASE_URL: db.url }), stdio: ['ignore', 'pipe', 'pipe'] });
  child = c;
  let out = '';
  c.stdout!.on('data', (d) => (out += String(d)));
  c.stderr!.on('data', (d) => (out += String(d)));
  const exited = new Promise<number | null>((resolve) => c.on('exit', (code) => resolve(code)));
  const { id } = await client.enqueue(Ping, {});
  const job = await waitFor(
    async () => {
      if (c.exitCode !== null) throw new Error(`the worker exited (${c.exitCode}):\n${out}`);
      return client.getJob(id);
    },
    (j) => j?.status === 'succeeded',
    { timeoutMs: 30_000, what: 'the job to succeed' },
  );
  expect(job!.result).toBe('pong');
  c.kill('SIGTERM');
  return { code: await exited, out };
}

describe('workhorse worker, installed from a linked checkout', () => {
  it("runs the application's jobs with the application's own client, and drains on SIGTERM", async () => {
    const { code, out } = await runsAndDrains([join(consumer, 'node_modules', '.bin', 'workhorse'), 'worker', 'worker.js'], consumer);
    expect(code).toBe(0);
    expect(out).not.toMatch(/needs the client|another copy/);
  }, 60_000);
});

describe('workhorse worker, run as node bin/workhorse.js inside the checkout', () => {
  it('runs a compiled module that imports the package by its name, and drains on SIGTERM', async () => {
    const root = dirname(dirname(checkout.bin));
    const { code, out } = await runsAndDrains([checkout.bin, 'worker', 'app/worker.js'], root);
    expect(code, out).toBe(0);
    expect(out).not.toMatch(/needs the client|another copy/);
  }, 60_000);

  it('does so with --verbose before the command too (it ran the sources and refused the module\'s client)', async () => {
    const root = dirname(dirname(checkout.bin));
    const { code, out } = await runsAndDrains([checkout.bin, '--verbose', 'worker', 'app/worker.js'], root);
    expect(code, out).toBe(0);
    expect(out).not.toMatch(/needs the client|another copy/);
  }, 60_000);
});

// workhorse installed from a checkout (`npm install ../workhorse`, which npm
// links): the application's `import 'workhorse'` loads the compiled dist/,
// and `workhorse worker app.js`, run through node_modules/.bin, used to run
// the CLI from the checkout's TypeScript sources, a second copy whose
// Worker refused the application's client ("a Worker needs the client
// createClient() returns"). Run as a dependency, the executable now runs
// the compiled CLI, the application's copy, and the worker runs its jobs.
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
  writeFileSync(
    join(consumer, 'worker.js'),
    `import { z } from 'zod';
import { createClient, defineJob, defineWorkerProcess } from 'workhorse';
const Ping = defineJob({ type: 'linked.ping', schema: z.object({}) });
export default defineWorkerProcess({
  client: () => createClient({ connectionString: process.env.DATABASE_URL, jobs: [Ping] }),
  workers: [{ options: { concurrency: 1, pollMs: 100 }, configure: (w) => w.handle(Ping, () => 'pong') }],
});
`,
  );
});

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await client?.close();
  await db?.drop();
  checkout?.remove();
  if (consumer) rmSync(consumer, { recursive: true, force: true });
});

describe('workhorse worker, installed from a linked checkout', () => {
  it("runs the application's jobs with the application's own client, and drains on SIGTERM", async () => {
    const c = spawn(process.execPath, [join(consumer, 'node_modules', '.bin', 'workhorse'), 'worker', 'worker.js'], {
      cwd: consumer,
      env: cliEnv({ DATABASE_URL: db.url }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
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
    expect(await exited).toBe(0);
    expect(out).not.toMatch(/needs the client/);
  }, 60_000);
});

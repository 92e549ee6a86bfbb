// Runs a bundled Lambda handler the way the Node.js runtime does: a process
// of its own (the container) imports the bundle once with plain Node (no
// test runner resolving its imports), then calls `handler(event, context)`
// once per invocation, with a context whose time left counts down. The
// process sees only the environment given (plus PATH, the AWS credentials
// and region the test set, and the NODE_OPTIONS the construct sets).
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const DRIVER = `
const { handler } = await import(process.argv[2]);
let invocations = 0;
process.on('message', async ({ id, event, budgetMs }) => {
  const deadline = Date.now() + budgetMs;
  const context = {
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
    functionVersion: '$LATEST',
    awsRequestId: 'req-' + process.pid + '-' + ++invocations,
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
  try {
    process.send({ id, ok: true, result: await handler(event, context) });
  } catch (err) {
    process.send({ id, ok: false, error: { name: err?.name, message: err?.message, code: err?.code } });
  }
});
process.send({ ready: true });
`;

export interface LambdaProcess {
  /** One invocation with `budgetMs` of time left; rejects with the handler's error. */
  invoke(event: unknown, budgetMs: number): Promise<unknown>;
  /** What the function printed (its logs). */
  output(): string;
  stop(): Promise<void>;
}

type Reply = { ready: true } | { id: number; ok: true; result: unknown } | { id: number; ok: false; error: { name?: string; message?: string; code?: string } };

export async function startLambdaProcess(bundleFile: string, env: Record<string, string>, functionName = 'workhorse-fn'): Promise<LambdaProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'wh-lambda-'));
  const driver = join(dir, 'runtime.mjs');
  writeFileSync(driver, DRIVER);
  const pass = (k: string) => (process.env[k] ? { [k]: process.env[k]! } : {});
  const child: ChildProcess = fork(driver, [pathToFileURL(bundleFile).href], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      ...pass('AWS_ACCESS_KEY_ID'),
      ...pass('AWS_SECRET_ACCESS_KEY'),
      ...pass('AWS_REGION'),
      AWS_LAMBDA_FUNCTION_NAME: functionName,
      NODE_OPTIONS: '--enable-source-maps',
      ...env,
    },
    execArgv: [],
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let ready!: () => void;
  const isReady = new Promise<void>((resolve) => (ready = resolve));
  child.on('message', (m: Reply) => {
    if ('ready' in m) return ready();
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    if (m.ok) w?.resolve(m.result);
    else w?.reject(Object.assign(new Error(m.error.message), { name: m.error.name, code: m.error.code }));
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  await Promise.race([
    isReady,
    exited.then(() => {
      throw new Error(`the function's process exited before it was ready:\n${out}`);
    }),
  ]).catch(async (err: unknown) => {
    await stop();
    throw err;
  });
  let next = 0;
  return {
    invoke: (event, budgetMs) =>
      new Promise((resolve, reject) => {
        const id = ++next;
        waiting.set(id, { resolve, reject });
        child.send({ id, event, budgetMs });
      }),
    output: () => out,
    stop,
  };
}

// The embedded PostgreSQL lives exactly as long as the process that started
// it, and never decides that process's exit code: killed with SIGKILL, or
// ending without calling stop(), the process leaves no server behind; its
// own exit code stands. Real processes, real signals, a real server.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const childScript = join(repoRoot, 'test', 'fixtures', 'embedded-child.ts');
// One cluster for the whole file (initdb runs once); the cases run in turn.
const dataDir = mkdtempSync(join(tmpdir(), 'wh-embedded-'));
const children: ChildProcess[] = [];

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

interface Started {
  child: ChildProcess;
  url: string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

async function startChild(mode: 'hold' | 'exit-3' | 'stop'): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', childScript, dataDir, mode], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const url = await new Promise<string>((resolve, reject) => {
    let line = '';
    child.stdout!.on('data', (d: Buffer) => {
      line += d.toString();
      if (line.includes('\n')) resolve((JSON.parse(line.split('\n')[0]!) as { url: string }).url);
    });
    void exit.then((e) => reject(new Error(`child exited (${JSON.stringify(e)}) before starting the server:\n${output}`)));
  });
  return { child, url, exit };
}

async function answers(url: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  c.on('error', () => undefined);
  try {
    await c.connect();
    await c.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => undefined);
  }
}

const serverGone = (url: string) =>
  waitFor(async () => (await answers(url)) || existsSync(join(dataDir, 'postmaster.pid')), (up) => !up, {
    timeoutMs: 15_000,
    what: 'the embedded server to shut down',
  });

describe('the embedded PostgreSQL', () => {
  it('shuts down when the process that started it is killed with SIGKILL', async () => {
    const { child, url, exit } = await startChild('hold');
    expect(await answers(url)).toBe(true);
    child.kill('SIGKILL');
    expect((await exit).signal).toBe('SIGKILL');
    await serverGone(url);
  });

  it('leaves the exit code to the process and shuts down when it ends without stop()', async () => {
    const { url, exit } = await startChild('exit-3');
    expect(await exit).toEqual({ code: 3, signal: null });
    await serverGone(url);
  });

  it('stops on stop(), and the process exits 0', async () => {
    const { url, exit } = await startChild('stop');
    expect(await exit).toEqual({ code: 0, signal: null });
    // stop() resolved only after the server had exited.
    expect(existsSync(join(dataDir, 'postmaster.pid'))).toBe(false);
    expect(await answers(url)).toBe(false);
  });
});

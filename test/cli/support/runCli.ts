// Runs the real `workhorse` executable (bin/workhorse.js) as a child
// process and collects its exit code and output; `compiledCli` lays out a
// compiled copy of the package (JavaScript only, as `npm install` gives it)
// for the cases where the CLI must run without a TypeScript loader.
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transform } from 'esbuild';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const BIN = join(ROOT, 'bin/workhorse.js');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of a child: this one's, without the variables the CLI reads unless given. */
export function cliEnv(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const k of Object.keys(env)) if (k === 'DATABASE_URL' || k.startsWith('WORKHORSE_')) delete env[k];
  return { ...env, ...extra };
}

export function startCli(args: string[], env: Record<string, string | undefined> = cliEnv(), bin = BIN): ChildProcess {
  return spawn(process.execPath, [bin, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
}

export function runCli(args: string[], env?: Record<string, string | undefined>, bin = BIN, timeoutMs = 30_000): Promise<CliRun> {
  const child = startCli(args, env, bin);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += String(d)));
  child.stderr!.on('data', (d) => (stderr += String(d)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`workhorse ${args.join(' ')} did not exit within ${timeoutMs} ms:\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      // Let the pipes drain.
      setImmediate(() => resolve({ code, stdout, stderr }));
    });
  });
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

export interface CompiledCli {
  bin: string;
  remove(): void;
}

/** A copy of the package as installed: bin/, sql/, package.json and src/ compiled to dist/src/*.js. */
export async function compiledCli(): Promise<CompiledCli> {
  const dir = mkdtempSync(join(tmpdir(), 'workhorse-cli-'));
  for (const file of tsFiles(join(ROOT, 'src'))) {
    const out = join(dir, 'dist', relative(ROOT, file)).replace(/\.ts$/, '.js');
    mkdirSync(dirname(out), { recursive: true });
    const { code } = await transform(readFileSync(file, 'utf8'), { loader: 'ts', format: 'esm', target: 'node20' });
    writeFileSync(out, code);
  }
  cpSync(join(ROOT, 'bin'), join(dir, 'bin'), { recursive: true });
  cpSync(join(ROOT, 'sql'), join(dir, 'sql'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return { bin: join(dir, 'bin/workhorse.js'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

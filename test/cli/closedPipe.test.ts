// `workhorse --help | head -1`: a reader that closes the pipe before the CLI
// writes used to kill it with an unhandled EPIPE and a stack trace on stderr
// (exit 1). The CLI now ignores the closed pipe and exits with its own code.
import { describe, expect, it } from 'vitest';
import { startCli } from './support/runCli.js';

function runWithClosedStdout(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = startCli(args);
  // Closed before the CLI has even loaded, so its first write meets a pipe with no reader.
  child.stdout!.destroy();
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += String(d)));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stderr })));
}

describe('a stdout whose reader is gone', () => {
  it.each([
    ['--help', ['--help']],
    ['help tick', ['help', 'tick']],
    ['--version', ['--version']],
  ])('workhorse %s exits 0 without a stack trace', async (_name, args) => {
    const r = await runWithClosedStdout(args);
    expect(r.stderr).not.toMatch(/EPIPE|Unhandled/);
    expect(r.code).toBe(0);
  }, 30_000);
});

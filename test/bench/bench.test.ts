// `npm run bench` is a benchmark, not a test, but it must keep working: a
// tiny run of the real command (child processes, real databases on the test
// server) returns complete JSON, and the table renders its rounds.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { BenchResults } from '../../bench/results.js';
import { median, medianRound } from '../../bench/stats.js';
import { renderTable } from '../../bench/table.js';
import { serverUrl } from '../helpers/db.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function runBench(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/main.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: serverUrl() },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('bench statistics', () => {
  it('reports the median round with every round kept, in the order run', () => {
    const r = medianRound([{ jobsPerSec: 30 }, { jobsPerSec: 10 }, { jobsPerSec: 20 }, { jobsPerSec: 40 }]);
    expect(r.jobsPerSec).toBe(20);
    expect(r.rounds).toEqual([30, 10, 20, 40]);
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
  });
});

describe('npm run bench', () => {
  it('measures the tick and HTTP bundles: their size and the import time of each, and of the Secrets Manager client', async () => {
    const out = await runBench(['--systems', 'workhorse', '--phases', 'bundle', '--import-samples', '2', '--json']);
    expect(out.code, out.stderr).toBe(0);
    const r = JSON.parse(out.stdout) as BenchResults;
    expect(r.bundle!.entries.map((e) => e.entry)).toEqual(['tick', 'http']);
    for (const e of r.bundle!.entries) {
      expect(e.bytes).toBeGreaterThan(50_000);
      expect(e.importMs).toBeGreaterThan(0);
      expect(e.cpuMs).toBeGreaterThan(0);
    }
    expect(r.bundle!.sdkClients[0]).toMatchObject({ name: '@aws-sdk/client-secrets-manager', importMs: expect.any(Number) });
    expect(renderTable(r)).toMatch(/\n {2}tick +\d+ KiB {2}import [\d.]+ ms \(CPU [\d.]+ ms\)/);
  });

  it('drains every job in every round and prints complete JSON and a table with the rounds', async () => {
    const out = await runBench([
      '--jobs', '400', '--systems', 'workhorse,graphile', '--phases', 'drain,raw', '--rounds', '2', '--raw-batch', '100', '--json',
    ]);
    expect(out.code, out.stderr).toBe(0);
    const r = JSON.parse(out.stdout) as BenchResults;
    for (const s of ['workhorse', 'graphile'] as const) {
      const d = r.systems[s]!.drain1!;
      expect(d.rounds).toHaveLength(2);
      expect(d.rounds!.every((x) => x > 0)).toBe(true);
      expect(d.leftover).toBe(0);
    }
    expect(r.raw!.rounds).toHaveLength(2);
    const table = renderTable(r);
    expect(table).toContain('the median of 2 rounds');
    expect(table).toMatch(/drain, 1 process \(jobs\/s\)\s+[\d,]+\s+[\d,]+\s+\d+\.\d\dx/);
    expect(table).toContain('raw ceiling');
  });
});

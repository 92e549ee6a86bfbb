// The bench's wake phase keeps working: a small run of the real command
// (`npm run bench -- --phases wake`, the machine's Redis) returns complete
// JSON with every measurement, and the table prints its lines.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { BenchResults } from '../../bench/results.js';
import { renderTable } from '../../bench/table.js';
import { serverUrl } from '../helpers/db.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function runBench(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/main.ts', ...args], { cwd: ROOT, env: { ...process.env, DATABASE_URL: serverUrl() } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('npm run bench -- --phases wake', () => {
  it('measures delayed-job lag with and without a listener, the claims of 8 idle workers, and Redis against LISTEN', async () => {
    const out = await runBench(['--systems', 'workhorse', '--phases', 'wake', '--latency-samples', '10', '--json']);
    expect(out.code, out.stderr).toBe(0);
    const w = (JSON.parse(out.stdout) as BenchResults).wake!;
    for (const lag of [w.delayedWithListener, w.delayedWithoutListener]) {
      expect(lag.samples).toBe(10);
      expect(lag.p50).toBeGreaterThanOrEqual(0);
      expect(lag.misses).toBeGreaterThanOrEqual(0);
    }
    expect(w.stagger.map((s) => s.staggerMs)).toEqual([10, 0]);
    for (const s of w.stagger) {
      expect(s.claims).toBe(8);
      expect(s.found).toBe(1);
    }
    expect(w.listenStart.samples).toBe(10);
    expect(w.redisStart).toMatchObject({ samples: 10 });
    const table = renderTable(JSON.parse(out.stdout) as BenchResults);
    expect(table).toMatch(/delayed job start after its due time, LISTEN: p50 [\d.]+ ms/);
    expect(table).toMatch(/8 idle workers, one notification, stagger 10 ms: 8 claim statements, 1 found the job/);
    expect(table).toMatch(/Redis hints, LISTEN off: p50 [\d.]+ ms/);
  }, 180_000);
});

// The verdict every fault scenario shares: the ledgers are clean (every job
// succeeded, none lost, each transactional step's effect exactly once, no
// recorded step ran again, no lease left) and every worker process is still
// the one that started, alive at the end and draining cleanly on SIGTERM.
import { expect } from 'vitest';
import type { FaultRunResult } from './harness.js';

export function expectSurvived(r: FaultRunResult, jobs: number): void {
  expect(r.violations).toEqual([]);
  expect(r.finished).toBe(jobs);
  expect(r.crashed).toBe(0);
  expect(r.started).toBe(3);
  expect(r.aliveAtEnd).toBe(3);
  expect(r.stopExits).toEqual([0, 0, 0]);
  expect(r.serverLog).not.toMatch(/deadlock detected/);
}

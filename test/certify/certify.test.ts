// The short crash certification CI runs: 3 worker processes, 2,000 jobs, a
// SIGKILL every second. Every guarantee is checked from the database's own
// ledgers by the same audit `npm run certify` prints.
import { describe, expect, it } from 'vitest';
import { runCertification } from '../../certify/run.js';
import { serverUrl } from '../helpers/db.js';

describe('crash certification (short)', () => {
  it('finishes every job with no lost job, duplicate effect, re-run step, fence regression or leftover lease while workers are SIGKILLed every second', async () => {
    const report = await runCertification(
      { mode: 'process', workers: 3, executors: 4, jobs: 2_000, steps: 2, killEveryMs: 1_000, heartbeatMs: 250, timeoutMs: 100_000 },
      serverUrl(),
    );
    expect(report.violations).toEqual([]);
    expect(report.finished).toBe(2_000);
    expect(report.lost).toBe(0);
    expect(report.txDuplicates).toBe(0);
    expect(report.stepReruns).toBe(0);
    expect(report.fenceRegressions).toBe(0);
    expect(report.leasesLeft).toBe(0);
    expect(report.workersKilled).toBeGreaterThan(0);
  }, 120_000);

  it('durable mode: jobs that also sleep, wait for a harness signal and spawn a child all finish, every check 0, under the same kills', async () => {
    const report = await runCertification(
      { mode: 'process', durable: true, workers: 3, executors: 4, jobs: 600, steps: 2, killEveryMs: 1_000, heartbeatMs: 250, timeoutMs: 100_000 },
      serverUrl(),
    );
    expect(report.violations).toEqual([]);
    expect(report.finished).toBe(1_200);
    expect(report.lost).toBe(0);
    expect(report.txDuplicates).toBe(0);
    expect(report.stepReruns).toBe(0);
    expect(report.fenceRegressions).toBe(0);
    expect(report.leasesLeft).toBe(0);
    expect(report.durable).toMatchObject({
      signalsSent: 600,
      parentsWithoutOneChild: 0,
      childrenMislinked: 0,
      signalsAstray: 0,
      parentsWithoutOneSignal: 0,
      waitsUnresolved: 0,
      sleepsEndedEarly: 0,
      wakeUpsCounted: 0,
    });
    expect(report.workersKilled).toBeGreaterThan(0);
  }, 120_000);
});

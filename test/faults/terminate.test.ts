// Scenario 2: pg_terminate_backend of every workhorse backend every 2 s for
// 20 s while three worker processes run step + transactional step jobs.
import { describe, expect, it } from 'vitest';
import { expectSurvived } from './expectSurvived.js';
import { runFaultScenario, sleep, useFaultCluster } from './harness.js';

const faultCluster = useFaultCluster();

describe('terminated backends', () => {
  it('every 2 s for 20 s leave every worker process alive and every job done exactly once', async () => {
    const jobs = 1500;
    let terminated = 0;
    const r = await runFaultScenario(faultCluster(), {
      jobs,
      pauseMs: 60,
      inject: async (e) => {
        for (let t = 0; t < 10; t++) {
          await sleep(2000);
          terminated += await e.cluster.terminateBackends(e.database);
        }
      },
    });
    expect(terminated).toBeGreaterThan(0);
    expectSurvived(r, jobs);
  }, 240_000);
});

// Scenario 1: PostgreSQL restarted (`pg_ctl restart -m fast`) twice while
// three worker processes run step + transactional step jobs.
import { describe, it } from 'vitest';
import { expectSurvived } from './expectSurvived.js';
import { runFaultScenario, sleep, useFaultCluster, untilSucceeded } from './harness.js';

const faultCluster = useFaultCluster();

describe('a PostgreSQL restart', () => {
  it('is ridden out twice by every worker process: no job lost, no effect twice, every process alive', async () => {
    const jobs = 600;
    const r = await runFaultScenario(faultCluster(), {
      jobs,
      pauseMs: 40,
      inject: async (e) => {
        await untilSucceeded(e, 50);
        await e.cluster.restart('fast');
        await sleep(2000);
        await untilSucceeded(e, 250);
        await e.cluster.restart('fast');
      },
    });
    expectSurvived(r, jobs);
  }, 240_000);
});

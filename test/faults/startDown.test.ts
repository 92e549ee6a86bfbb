// Scenario 5: the database is down when the worker processes start and comes
// up 5 s later: they wait for it (no restart) and finish the jobs.
import { describe, expect, it } from 'vitest';
import { expectSurvived } from './expectSurvived.js';
import { runFaultScenario, sleep, useFaultCluster } from './harness.js';

const faultCluster = useFaultCluster();

describe('a database that is down at start-up', () => {
  it('is waited for: the workers start, the server comes up 5 s later, every job finishes with no process restarted', async () => {
    const jobs = 300;
    let aliveWhileDown = 0;
    const r = await runFaultScenario(faultCluster(), {
      jobs,
      pauseMs: 20,
      before: async (e) => {
        await e.cluster.halt('fast');
      },
      inject: async (e) => {
        await sleep(5000);
        aliveWhileDown = e.fleet.alive;
        await e.cluster.resume();
      },
    });
    expect(aliveWhileDown).toBe(3);
    expectSurvived(r, jobs);
  }, 240_000);
});

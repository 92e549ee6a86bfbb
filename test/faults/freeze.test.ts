// Scenario 3: every connection frozen past the lease (2 s), then resumed:
// heartbeats come back all at once and their recovery passes race; none may
// deadlock another.
import { describe, it } from 'vitest';
import { expectSurvived } from './expectSurvived.js';
import { runFaultScenario, sleep, useFaultCluster, untilSucceeded } from './harness.js';

const faultCluster = useFaultCluster();

describe('frozen connections', () => {
  it('frozen past the lease and resumed: no deadlock in the server log, every process alive, every job done once', async () => {
    const jobs = 600;
    const r = await runFaultScenario(faultCluster(), {
      jobs,
      pauseMs: 40,
      inject: async (e) => {
        for (let round = 1; round <= 2; round++) {
          await untilSucceeded(e, round * 100);
          e.proxy.freeze();
          await sleep(4000);
          e.proxy.resume();
        }
      },
    });
    expectSurvived(r, jobs);
  }, 240_000);
});

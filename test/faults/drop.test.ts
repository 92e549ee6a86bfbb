// Scenario 4: every proxied connection dropped (TCP reset), twice.
import { describe, expect, it } from 'vitest';
import { expectSurvived } from './expectSurvived.js';
import { runFaultScenario, sleep, useFaultCluster, untilSucceeded } from './harness.js';

const faultCluster = useFaultCluster();

describe('dropped connections', () => {
  it('every connection reset twice: every process alive, every job done once', async () => {
    const jobs = 600;
    let dropped = 0;
    const r = await runFaultScenario(faultCluster(), {
      jobs,
      pauseMs: 40,
      inject: async (e) => {
        await untilSucceeded(e, 80);
        dropped += e.proxy.dropAll();
        await sleep(1500);
        await untilSucceeded(e, 250);
        dropped += e.proxy.dropAll();
      },
    });
    expect(dropped).toBeGreaterThan(0);
    expectSurvived(r, jobs);
  }, 240_000);
});

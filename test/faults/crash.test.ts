// A PostgreSQL crash (`pg_ctl restart -m immediate`) while three worker
// processes run step + transactional step jobs. The lease table and the
// gates are UNLOGGED, so crash recovery brings them back empty: every job
// that was leased is still a ready row and is claimed again, the lease epoch
// moves on so no execution is issued twice, and the stale owners' writes are
// refused by the fence. Nothing is lost and no effect happens twice.
import { describe, expect, it } from 'vitest';
import { expectSurvived } from './expectSurvived.js';
import { runFaultScenario, sleep, useFaultCluster, untilSucceeded } from './harness.js';

const faultCluster = useFaultCluster();

describe('a PostgreSQL crash', () => {
  it('empties the lease table, and the jobs it leased run again exactly once under a new lease epoch', async () => {
    const jobs = 600;
    let leasesBefore = -1;
    let epochs: number[] = [];
    const r = await runFaultScenario(faultCluster(), {
      jobs,
      pauseMs: 40,
      inject: async (e) => {
        for (let round = 1; round <= 2; round++) {
          await untilSucceeded(e, round * 150);
          if (round === 1) leasesBefore = (await e.pool.query<{ n: number }>('select count(*)::int as n from workhorse.job_runtime')).rows[0]!.n;
          await e.cluster.restart('immediate');
          await sleep(1500);
        }
        epochs = (await e.pool.query<{ epoch: string }>('select epoch from workhorse.lease_epoch')).rows.map((x) => Number(x.epoch));
      },
    });
    expect(leasesBefore).toBeGreaterThan(0);
    // Each crash started a new lease epoch.
    expect(epochs).toEqual([2]);
    expectSurvived(r, jobs);
    expect(r.serverLog).toMatch(/database system was interrupted|was not properly shut down/);
  }, 240_000);
});

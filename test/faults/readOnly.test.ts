// Scenario: the database turns read-only for 8 s while three worker
// processes run, as when a failover or a switchover leaves connections on a
// server that is now a standby (or a DNS name still points at it): every
// write fails with 25006 (read_only_sql_transaction) until the connections
// reach a primary again. Simulated with default_transaction_read_only on the
// database and every backend terminated, so the workers' new connections
// are read-only; then the setting is reset and the backends terminated
// again. The workers must wait it out like any other fault: alive, every
// job done exactly once. Without the second termination, too: a session
// that began read-only stays so for good, and a worker's pool used to lend
// those connections out again after every failed write, so the workers
// failed every heartbeat and settlement long after the database took
// writes again; such a connection is destroyed now, and the retry connects
// afresh.
import { describe, expect, it } from 'vitest';
import { onServer } from '../../certify/run.js';
import { expectSurvived } from './expectSurvived.js';
import { runFaultScenario, sleep, useFaultCluster, untilSucceeded, type FaultEnv } from './harness.js';

const faultCluster = useFaultCluster();

/** Sets the scenario's database read-only and ends its sessions: every new session is read-only. */
async function turnReadOnly(e: FaultEnv): Promise<void> {
  await untilSucceeded(e, 50);
  await onServer(e.cluster.url(), `alter database ${e.database} set default_transaction_read_only = on`);
  await e.cluster.terminateBackends(e.database);
}

/** Writable again for sessions that begin from now on. */
async function turnWritable(e: FaultEnv): Promise<void> {
  await onServer(e.cluster.url(), `alter database ${e.database} reset default_transaction_read_only`);
}

describe('a read-only database', () => {
  it('for 8 s leaves every worker process alive and every job done exactly once', async () => {
    const jobs = 600;
    let during = -1;
    const r = await runFaultScenario(faultCluster(), {
      jobs,
      pauseMs: 40,
      inject: async (e) => {
        await turnReadOnly(e);
        await sleep(1000);
        const before = await e.succeeded();
        await sleep(7000);
        during = (await e.succeeded()) - before;
        await turnWritable(e);
        await e.cluster.terminateBackends(e.database);
      },
    });
    // Nothing could be written while the database refused writes.
    expect(during).toBe(0);
    expectSurvived(r, jobs);
  }, 240_000);

  it('for 5 s, with nobody terminating the read-only sessions afterwards, still ends with every job done exactly once', async () => {
    const jobs = 400;
    const r = await runFaultScenario(faultCluster(), {
      jobs,
      pauseMs: 40,
      inject: async (e) => {
        await turnReadOnly(e);
        await sleep(5000);
        // Writable again; the sessions opened meanwhile are left as they are.
        await turnWritable(e);
      },
    });
    expectSurvived(r, jobs);
  }, 240_000);
});

// The fault tests' shared run: a PostgreSQL cluster this file owns (so it
// can be restarted and its backends killed), a TCP proxy in front of it (so
// connections can be frozen and dropped), and three certification worker
// processes (concurrency 8, heartbeat 500 ms) running step + transactional
// step jobs through the proxy while the scenario injects its faults. The
// verdict comes from the database's own ledgers (the certification audit)
// and from the processes: every one must still be alive at the end and
// drain cleanly on SIGTERM.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { auditLedgers, createHarnessSchema } from '../../certify/certifySql.js';
import { plainStepNames, TX_STEP } from '../../certify/certifyApp.js';
import { Fleet } from '../../certify/fleet.js';
import { resolveCertifyOptions, type ResolvedCertifyOptions } from '../../certify/options.js';
import { startOwnCluster, type OwnCluster } from '../../certify/ownCluster.js';
import { enqueueAll, judge, onServer, violationsOf, waitForEmptyQueue, withDatabase } from '../../certify/run.js';
import { TcpProxy } from '../../certify/tcpProxy.js';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface FaultEnv {
  cluster: OwnCluster;
  proxy: TcpProxy;
  /** The database the workers use. */
  database: string;
  /** A direct (unproxied) pool on it, for the scenario's own reads. */
  pool: pg.Pool;
  fleet: Fleet;
  /** Succeeded jobs so far. */
  succeeded(): Promise<number>;
}

export interface FaultRunOptions {
  jobs: number;
  /** Pause inside each step, to make the run last while faults land. */
  pauseMs: number;
  /** Runs before the fleet starts (e.g. stop the server). */
  before?: (env: Omit<FaultEnv, 'fleet'>) => Promise<void>;
  /** Runs while the fleet works; the run waits for it and for the queue to empty. */
  inject: (env: FaultEnv) => Promise<void>;
}

export interface FaultRunResult {
  violations: string[];
  finished: number;
  /** Worker processes that died on their own (a database fault must never end one). */
  crashed: number;
  started: number;
  /** Alive just before the final SIGTERM. */
  aliveAtEnd: number;
  /** Exit codes of the final drain (0 = drained cleanly). */
  stopExits: (number | null)[];
  serverLog: string;
}

/** The cluster a fault test file owns, and the proxy its workers connect through. */
export interface FaultCluster {
  cluster: OwnCluster;
  proxy: TcpProxy;
  proxyPort: number;
}

/**
 * One cluster per test file, called at the file's top level: started before
 * its tests, destroyed after them. Returns the cluster once it runs.
 */
export function useFaultCluster(): () => FaultCluster {
  let started: FaultCluster | undefined;
  beforeAll(async () => {
    const cluster = await startOwnCluster();
    const proxy = new TcpProxy('127.0.0.1', cluster.port);
    started = { cluster, proxy, proxyPort: await proxy.start() };
  });
  afterAll(async () => {
    await started?.proxy.close();
    await started?.cluster.destroy();
  });
  return () => {
    if (!started) throw new Error('the fault cluster has not started (useFaultCluster runs in beforeAll)');
    return started;
  };
}

export async function runFaultScenario(
  env: FaultCluster,
  o: FaultRunOptions,
): Promise<FaultRunResult> {
  const options: ResolvedCertifyOptions = resolveCertifyOptions({
    workers: 3,
    executors: 8,
    heartbeatMs: 500,
    jobs: o.jobs,
    steps: 3,
    timeoutMs: 180_000,
  });
  const database = `wh_fault_${randomBytes(4).toString('hex')}`;
  await onServer(env.cluster.url(), `create database ${database}`);
  const direct = withDatabase(env.cluster.url(), database);
  const proxied = `postgres://postgres@127.0.0.1:${env.proxyPort}/${database}`;
  const pool = new pg.Pool({ connectionString: direct, max: 2 });
  pool.on('error', () => undefined);
  await migrate({ connectionString: direct });
  await createHarnessSchema(pool);
  await enqueueAll(direct, options, o.pauseMs);
  const fleet = new Fleet({
    mode: 'process',
    size: options.workers,
    killEveryMs: 3_600_000,
    noKiller: true,
    config: { url: proxied, namespace: options.namespace, executors: options.executors, heartbeatMs: options.heartbeatMs, tickMs: 3000 },
  });
  const succeeded = async () => {
    const r = await pool.query<{ n: number }>(`select count(*)::int as n from workhorse.jobs where status = 'succeeded'`);
    return r.rows[0]!.n;
  };
  const base = { cluster: env.cluster, proxy: env.proxy, database, pool, succeeded };
  try {
    await o.before?.(base);
    await fleet.start();
    await o.inject({ ...base, fleet });
    const emptied = await waitForEmptyQueue(pool, options, fleet, () => undefined, undefined);
    const aliveAtEnd = fleet.alive;
    await fleet.stop();
    const findings = await auditLedgers(pool, options.namespace, TX_STEP, plainStepNames(options.steps));
    const partial = {
      options,
      ...judge(options, findings),
      durable: null,
      workersKilled: 0,
      processesStarted: fleet.started,
      processesCrashed: fleet.crashed,
      databaseRestarts: 0,
      backendTerminations: 0,
      wallMs: 0,
      timedOut: !emptied,
      interrupted: false,
    };
    return {
      violations: violationsOf(partial),
      finished: partial.finished,
      crashed: fleet.crashed,
      started: fleet.started,
      aliveAtEnd,
      stopExits: fleet.stopExits,
      serverLog: env.cluster.log(),
    };
  } finally {
    await fleet.stop().catch(() => undefined);
    await pool.end();
    await onServer(env.cluster.url(), `drop database if exists ${database} with (force)`).catch(() => undefined);
  }
}

/** Waits until at least `n` jobs have succeeded. */
export async function untilSucceeded(env: FaultEnv, n: number, timeoutMs = 60_000): Promise<void> {
  const start = Date.now();
  while ((await env.succeeded()) < n) {
    if (Date.now() - start > timeoutMs) throw new Error(`fewer than ${n} jobs succeeded within ${timeoutMs} ms`);
    await sleep(100);
  }
}

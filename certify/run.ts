// One certification run: a fresh database, J jobs enqueued, a fleet of W
// worker (or tick) processes under a killer until the queue is empty, then
// an audit of the database's own ledgers. The report lists every finding;
// `violations` is empty only when every guarantee held.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Client } from '../src/client/client.js';
import { migrate } from '../src/db/migrate.js';
import * as protocol from '../src/db/protocol.js';
import { retryTransient } from '../src/db/retryTransient.js';
import { auditDurable, auditLedgers, createHarnessSchema, type DurableFindings, type LedgerFindings } from './certifySql.js';
import { certifyApp, certifyJob, CERTIFY_TYPE, plainStepNames, TX_STEP } from './certifyApp.js';
import { FaultInjector } from './faultInjector.js';
import { Fleet } from './fleet.js';
import { startOwnCluster, type OwnCluster } from './ownCluster.js';
import { Signaller } from './signaller.js';
import { resolveCertifyOptions, type CertifyOptions, type ResolvedCertifyOptions } from './options.js';

const ENQUEUE_CHUNK = 5_000;

export interface CertifyReport {
  options: ResolvedCertifyOptions;
  finished: number;
  failed: number;
  lost: number;
  txDuplicates: number;
  txMissing: number;
  stepReruns: number;
  stepsWithoutEffect: number;
  fenceRegressions: number;
  leasesLeft: number;
  workersKilled: number;
  processesStarted: number;
  /** Worker processes that died without being killed: a database fault must never end one. */
  processesCrashed: number;
  databaseRestarts: number;
  backendTerminations: number;
  attemptsRecovered: number;
  attemptsRetried: number;
  wallMs: number;
  timedOut: boolean;
  interrupted: boolean;
  findings: LedgerFindings;
  /** The durable mode's findings (null in the plain mode), and the signals the harness sent. */
  durable: (DurableFindings & { signalsSent: number }) | null;
  /** Empty when every guarantee held. */
  violations: string[];
}

export function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

export async function onServer(serverUrl: string, sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: serverUrl });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

export async function enqueueAll(
  url: string,
  o: Pick<ResolvedCertifyOptions, 'namespace' | 'jobs' | 'steps'> & { durable?: boolean },
  pauseMs?: number,
): Promise<void> {
  const client = new Client({ connectionString: url, namespace: o.namespace, jobs: certifyApp.jobs, poolMax: 2 });
  try {
    for (let at = 0; at < o.jobs; at += ENQUEUE_CHUNK) {
      const n = Math.min(ENQUEUE_CHUNK, o.jobs - at);
      await client.enqueueMany(Array.from({ length: n }, (_, k) => ({ job: certifyJob, payload: { n: at + k, steps: o.steps, ...(pauseMs !== undefined ? { pauseMs } : {}), ...(o.durable ? { durable: true } : {}) } })));
    }
  } finally {
    await client.close();
  }
}

/** Waits until nothing is ready, running or waiting (or the timeout); returns whether it emptied. */
export async function waitForEmptyQueue(
  pool: pg.Pool,
  o: ResolvedCertifyOptions,
  fleet: Fleet,
  log: (line: string) => void,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  const started = Date.now();
  let lastLog = started;
  for (;;) {
    // The run's own reads ride out the database faults it injects.
    const queues = await retryTransient(() => protocol.listQueues(pool, o.namespace), { baseMs: 100, maxMs: 1000 });
    const pending = queues.reduce((a, q) => a + q.ready + q.running + q.waiting, 0);
    if (pending === 0) return true;
    if (Date.now() - started > o.timeoutMs || signal?.aborted) return false;
    if (Date.now() - lastLog >= 5000) {
      lastLog = Date.now();
      log(`${pending} jobs pending, ${fleet.killed} workers killed, ${Math.round((Date.now() - started) / 1000)} s`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

type Judged = Omit<
  CertifyReport,
  | 'options'
  | 'workersKilled'
  | 'processesStarted'
  | 'processesCrashed'
  | 'databaseRestarts'
  | 'backendTerminations'
  | 'wallMs'
  | 'timedOut'
  | 'interrupted'
  | 'violations'
  | 'durable'
>;

/** Jobs the run must finish: the enqueued ones, and in the durable mode their children. */
export function expectedJobs(o: Pick<ResolvedCertifyOptions, 'jobs'> & { durable?: boolean }): number {
  return o.durable ? 2 * o.jobs : o.jobs;
}

export function judge(o: ResolvedCertifyOptions, f: LedgerFindings): Judged {
  const finished = f.byStatus.succeeded ?? 0;
  const failed = f.byStatus.failed ?? 0;
  const terminal = finished + failed + (f.byStatus.cancelled ?? 0);
  return {
    finished,
    failed,
    lost: expectedJobs(o) - terminal,
    txDuplicates: f.txDuplicates,
    txMissing: f.txMissing,
    stepReruns: f.stepReruns,
    stepsWithoutEffect: f.stepsWithoutEffect,
    fenceRegressions: Object.values(f.fence).reduce((a, b) => a + b, 0),
    leasesLeft: f.leasesLeft,
    attemptsRecovered: f.attempts.recovered ?? 0,
    attemptsRetried: f.attempts.retried ?? 0,
    findings: f,
  };
}

export function violationsOf(r: Omit<CertifyReport, 'violations'>): string[] {
  const v: string[] = [];
  const must = (ok: boolean, what: string) => {
    if (!ok) v.push(what);
  };
  must(!r.timedOut, r.interrupted ? 'the run was interrupted before the queue emptied' : `the queue did not empty within ${r.options.timeoutMs} ms`);
  must(r.finished === expectedJobs(r.options), `${r.finished} of ${expectedJobs(r.options)} jobs finished`);
  must(r.lost === 0, `${r.lost} jobs lost`);
  must(r.failed === 0, `${r.failed} jobs ended failed`);
  must(r.txDuplicates === 0, `${r.txDuplicates} jobs have a transactional step effect recorded more than once`);
  must(r.txMissing === 0, `${r.txMissing} succeeded jobs have no transactional step effect`);
  must(r.stepReruns === 0, `${r.stepReruns} recorded steps ran again after being recorded`);
  must(r.stepsWithoutEffect === 0, `${r.stepsWithoutEffect} steps were recorded without their body having run`);
  for (const [k, n] of Object.entries(r.findings.fence)) must(n === 0, `fence regression: ${k} = ${n}`);
  must(r.leasesLeft === 0, `${r.leasesLeft} leases left`);
  must(r.processesCrashed === 0, `${r.processesCrashed} worker processes died without being killed`);
  if (r.durable) {
    const { signalsSent, ...d } = r.durable;
    must(signalsSent === r.options.jobs, `${signalsSent} of ${r.options.jobs} signals sent`);
    for (const [k, n] of Object.entries(d)) must(n === 0, `durable: ${k} = ${n}`);
  }
  return v;
}

/**
 * `signal` ends the wait early (Ctrl-C): the fleet drains and the audit
 * reports what is unfinished. With `faults` the run owns its PostgreSQL
 * cluster (serverUrl is not used) so it can restart it.
 */
export async function runCertification(
  options: CertifyOptions,
  serverUrl: string,
  log: (line: string) => void = () => undefined,
  signal?: AbortSignal,
): Promise<CertifyReport> {
  const o = resolveCertifyOptions(options);
  if (!o.faults) return certifyOn(serverUrl, undefined, o, log, signal);
  log('starting a PostgreSQL cluster of our own for the database faults');
  const cluster = await startOwnCluster();
  try {
    return await certifyOn(cluster.url(), cluster, o, log, signal);
  } finally {
    await cluster.destroy();
  }
}

async function certifyOn(
  serverUrl: string,
  cluster: OwnCluster | undefined,
  o: ResolvedCertifyOptions,
  log: (line: string) => void,
  signal: AbortSignal | undefined,
): Promise<CertifyReport> {
  const name = `wh_certify_${randomBytes(4).toString('hex')}`;
  await onServer(serverUrl, `create database ${name}`);
  const url = withDatabase(serverUrl, name);
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on('error', () => undefined);
  try {
    await migrate({ connectionString: url });
    await createHarnessSchema(pool);
    log(`enqueueing ${o.jobs} jobs of ${o.steps} steps into ${name}`);
    await enqueueAll(url, o);
    const signaller = o.durable ? new Signaller(url, o.namespace, pool, o.jobs, (err) => log(`signaller: ${(err as Error).message}`)) : undefined;
    const fleet = new Fleet({
      mode: o.mode,
      size: o.workers,
      killEveryMs: o.killEveryMs,
      config: { url, namespace: o.namespace, executors: o.executors, heartbeatMs: o.heartbeatMs, tickMs: o.tickMs },
    });
    log(`${o.workers} ${o.mode === 'tick' ? 'tick' : 'worker'} processes x ${o.executors} executors, a kill every ${o.killEveryMs} ms`);
    const faults = cluster ? new FaultInjector(cluster, name, o.faultEveryMs, log) : undefined;
    if (faults) log(`a database fault every ${o.faultEveryMs} ms: backend terminations, and a server restart every third`);
    const t0 = performance.now();
    await fleet.start();
    faults?.start();
    signaller?.start();
    let emptied: boolean;
    try {
      emptied = await waitForEmptyQueue(pool, o, fleet, log, signal);
    } finally {
      await signaller?.stop();
      await faults?.stop();
      await fleet.stop();
    }
    const wallMs = performance.now() - t0;
    const findings = await auditLedgers(pool, o.namespace, TX_STEP, plainStepNames(o.steps));
    const durable = signaller ? { ...(await auditDurable(pool, o.namespace, CERTIFY_TYPE)), signalsSent: signaller.sent } : null;
    const partial = {
      options: o,
      ...judge(o, findings),
      durable,
      workersKilled: fleet.killed,
      processesStarted: fleet.started,
      processesCrashed: fleet.crashed,
      databaseRestarts: faults?.restarts ?? 0,
      backendTerminations: faults?.terminations ?? 0,
      wallMs,
      timedOut: !emptied,
      interrupted: !emptied && Boolean(signal?.aborted),
    };
    return { ...partial, violations: violationsOf(partial) };
  } finally {
    await pool.end();
    if (!o.keep) await onServer(serverUrl, `drop database if exists ${name} with (force)`);
  }
}

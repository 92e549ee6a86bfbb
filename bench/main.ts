// `npm run bench`: workhorse and its peers side by side on one PostgreSQL,
// each system in its own child processes and its own fresh databases,
// printed as one table (or one JSON document with --json). A benchmark,
// not a test: it asserts nothing and its numbers depend on the machine and
// on whatever else the machine is doing, which the header reports, and on
// the server's durability settings, which it reports too: without
// DATABASE_URL it starts the embedded PostgreSQL with durable settings
// (server.ts), and a run on a server without them is marked as not for
// publication.
import { cpus, loadavg, totalmem } from 'node:os';
import pg from 'pg';
import { loadEnvConfig } from '../src/config.js';
import { runScript } from '../src/cli/runScript.js';
import { BENCH_USAGE, parseBenchFlags, type BenchFlags, type SystemName } from './options.js';
import { disposeChildEntry } from './child/spawn.js';
import { dropLiveDatabases } from './databases.js';
import { medianDrain } from './drainMedian.js';
import { readDurability } from './durability.js';
import { measureBundle } from './phases/bundle.js';
import type { PhaseContext } from './phases/context.js';
import { measureDrain, type DrainResult } from './phases/drain.js';
import { measureEnqueue } from './phases/enqueue.js';
import { measureLatency } from './phases/latency.js';
import { measureRawCeiling, type RawResult } from './phases/raw.js';
import { measureScale } from './phases/scale.js';
import { measureTick } from './phases/tick.js';
import { measureWake } from './phases/wake.js';
import { measureTelemetry } from './phases/telemetry.js';
import { measureOutbox } from './phases/outbox.js';
import { measureSuspend } from './phases/suspend.js';
import type { BenchResults, MachineInfo, SystemResults } from './results.js';
import { GRAPHILE_LOCAL_QUEUE } from './systems/graphile.js';
import { pgbossLocalConcurrency } from './systems/pgboss.js';
import { DISPLAY_NAME } from './systems/registry.js';
import { medianRound } from './stats.js';
import { openBenchServer, type BenchServer } from './server.js';
import { renderTable } from './table.js';

function describeConfig(system: SystemName, f: BenchFlags): string {
  if (system === 'graphile') {
    return `concurrency ${f.concurrency}, localQueue.size ${GRAPHILE_LOCAL_QUEUE}, completeJobBatchDelay 0, failJobBatchDelay 0, LISTEN/NOTIFY`;
  }
  if (system === 'pgboss') {
    const lc = pgbossLocalConcurrency(f.concurrency, f['pgboss-batch']);
    return `batchSize ${f['pgboss-batch']}, localConcurrency ${lc}, burstWhenBatchFull, useListenNotify + queue notify, pollingIntervalSeconds 0.5`;
  }
  return `concurrency ${f.concurrency}, prefetch ${f.prefetch}, heartbeat 30 s (lease 120 s), LISTEN wake-ups, fence + leases + attempts ledger on`;
}

async function machineInfo(server: BenchServer): Promise<MachineInfo> {
  const c = new pg.Client({ connectionString: server.connectionString });
  await c.connect();
  const v = await c.query<{ v: string }>(`select 'PostgreSQL ' || current_setting('server_version') as v`);
  await c.end();
  return {
    date: new Date().toISOString().slice(0, 10),
    cpus: cpus().length,
    memGiB: Math.round(totalmem() / 1024 ** 3),
    node: process.versions.node,
    postgres: v.rows[0]!.v,
    server: server.source,
    durability: await readDurability(server.connectionString),
    loadBefore: loadavg()[0]!,
    loadAfter: NaN,
  };
}

async function runBench(flags: BenchFlags, server: BenchServer, log: (l: string) => void): Promise<BenchResults> {
  const started = performance.now();
  const ctx: PhaseContext = { serverUrl: server.connectionString, flags, log };
  const results: BenchResults = { machine: await machineInfo(server), flags, systems: {}, wallSeconds: 0 };
  const has = (p: BenchFlags['phases'][number]) => flags.phases.includes(p);
  for (const s of flags.systems) results.systems[s] = { config: describeConfig(s, flags) } satisfies SystemResults;
  const each = async (what: string, fn: (s: SystemName, r: SystemResults) => Promise<void>) => {
    for (const s of flags.systems) {
      log(`${what}: ${DISPLAY_NAME[s]}`);
      await fn(s, results.systems[s]!);
    }
  };
  // Throughput on a small machine swings from one run to the next; each
  // drain is measured in several rounds, the systems taking turns, and the
  // median round is reported (every round's rate is kept), and each per-job
  // cost is the median of its rounds (drainMedian.ts). The raw ceiling
  // takes its turn in the one-process rounds, so each round's share of the
  // ceiling compares runs made seconds apart.
  const drains = async (
    what: string,
    key: 'drain1' | 'drain2' | 'heldXmin',
    processes: number,
    heldXmin: boolean,
    alsoEachRound?: (round: number) => Promise<void>,
  ) => {
    const rounds: Partial<Record<SystemName, DrainResult[]>> = {};
    for (let i = 1; i <= flags.rounds; i++) {
      await each(`${what}, round ${i}/${flags.rounds}`, async (s) => void (rounds[s] ??= []).push(await measureDrain(ctx, s, processes, heldXmin)));
      await alsoEachRound?.(i);
    }
    for (const s of flags.systems) results.systems[s]![key] = medianDrain(rounds[s]!);
  };
  const rawRounds: RawResult[] = [];
  const rawRound = async (i: number) => {
    log(`raw ceiling, round ${i}/${flags.rounds}`);
    rawRounds.push(await measureRawCeiling(ctx));
  };
  if (has('drain')) await drains('drain, 1 process', 'drain1', 1, false, has('raw') ? rawRound : undefined);
  else if (has('raw')) for (let i = 1; i <= flags.rounds; i++) await rawRound(i);
  if (rawRounds.length) results.raw = medianRound(rawRounds);
  if (has('drain2')) await drains('drain, 2 processes', 'drain2', 2, false);
  if (has('heldxmin')) await drains('drain, held xmin', 'heldXmin', 1, true);
  if (has('enqueue')) await each('enqueue', async (s, r) => void (r.enqueue = await measureEnqueue(ctx, s)));
  if (has('latency')) await each('latency', async (s, r) => void (r.latency = await measureLatency(ctx, s)));
  if (has('tick')) {
    log('tick cost');
    results.tick = await measureTick(ctx);
  }
  if (has('scale')) {
    log('scale');
    results.scale = await measureScale(ctx);
  }
  if (has('wake')) {
    log('wake path');
    results.wake = await measureWake(ctx);
  }
  if (has('telemetry') && flags.systems.includes('workhorse')) {
    log('OpenTelemetry cost');
    results.telemetry = await measureTelemetry(ctx);
  }
  if (has('outbox') && flags.systems.includes('workhorse')) {
    log('outbox delivery');
    results.outbox = await measureOutbox(ctx);
  }
  if (has('suspend') && flags.systems.includes('workhorse')) {
    log('durable waits: suspend/resume round trip');
    results.suspend = await measureSuspend(ctx);
  }
  if (has('bundle')) {
    log('bundle size and import time');
    results.bundle = await measureBundle(ctx);
  }
  results.machine.loadAfter = loadavg()[0]!;
  results.wallSeconds = (performance.now() - started) / 1000;
  return results;
}

async function main(argv: string[]): Promise<number> {
  const flags = parseBenchFlags(argv);
  if (flags.help) {
    console.log(BENCH_USAGE);
    return 0;
  }
  const db = await openBenchServer(loadEnvConfig());
  const log = (l: string) => console.error(`[bench] ${l}`);
  process.once('SIGINT', () => {
    log('interrupted: dropping the benchmark databases');
    void dropLiveDatabases(db.connectionString).finally(() => process.exit(130));
  });
  try {
    if (db.source === 'embedded') log('no DATABASE_URL: started the embedded PostgreSQL with durable settings');
    const results = await runBench(flags, db, log);
    console.log(flags.json ? JSON.stringify(results, null, 2) : renderTable(results));
    return 0;
  } finally {
    await disposeChildEntry();
    await db.close();
  }
}

runScript('bench', BENCH_USAGE, main);

// Drain rate: N no-op jobs bulk-enqueued, then P worker processes at the
// same concurrency drain them. The rate is N over the time from the first
// handler start to the N-th, across all processes; afterwards the phase
// checks from the database that every job was settled. With `heldXmin`
// another connection holds a REPEATABLE READ snapshot for the whole run.
// Around the drain a write window (writeCost.ts) counts what PostgreSQL
// wrote for it: WAL, commits, index entries and rows, per job.
import { holdSnapshot } from '../benchSql.js';
import { databaseCpuMs } from '../serverCpu.js';
import { runChildren } from '../child/spawn.js';
import type { SystemName } from '../options.js';
import { systemFor } from '../systems/registry.js';
import { openWriteWindow, type WriteCost } from '../writeCost.js';
import type { BenchDatabase } from '../databases.js';
import { withDatabase, type PhaseContext } from './context.js';

/** What one job cost, in CPU and writes: each a median over rounds in a reported result. */
export interface DrainCost extends WriteCost {
  /** CPU the worker processes used per job, in microseconds (start-up excluded). */
  clientCpuUsPerJob: number;
  /** CPU the database's backends used per job, in microseconds; null when not measurable. */
  serverCpuUsPerJob: number | null;
}

export interface DrainResult extends DrainCost {
  jobsPerSec: number;
  processes: number;
  /** Jobs the database still held unsettled after the workers stopped (must be 0). */
  leftover: number;
  /** With several rounds (the reported rate is the median round's): every round's jobs/s, in the order run. */
  rounds?: number[];
  /** With several rounds: every round's costs, in the order run (the reported costs are their medians). */
  costRounds?: DrainCost[];
}

interface TimedDrain {
  jobsPerSec: number;
  clientCpuUsPerJob: number;
  serverCpuUsPerJob: number | null;
}

/** Starts the worker processes on a filled database and times them until the N-th handler start. */
async function timedDrain(ctx: PhaseContext, system: SystemName, db: BenchDatabase, processes: number): Promise<TimedDrain> {
  const n = ctx.flags.jobs;
  const scenario = {
    kind: 'drain' as const,
    concurrency: ctx.flags.concurrency,
    prefetch: ctx.flags.prefetch,
    batch: ctx.flags['pgboss-batch'],
  };
  const cpuBefore = await databaseCpuMs(ctx.serverUrl, db.name);
  let cpuAfter: number | null = null;
  const out = await runChildren(
    Array.from({ length: processes }, () => ({ system, url: db.url, scenario })),
    {
      expect: n,
      timeoutMs: 300_000,
      beforeStop: async () => {
        cpuAfter = await databaseCpuMs(ctx.serverUrl, db.name);
      },
    },
  );
  if (out.doneAt === undefined || out.firstAt === undefined) throw new Error(`${system} drained ${out.counted} of ${n} jobs`);
  const clientCpuMs = out.results.reduce((a, r) => a + Number(r.cpuMs ?? 0), 0);
  const serverCpuMs = cpuBefore === null || cpuAfter === null ? null : (cpuAfter as number) - cpuBefore;
  return {
    jobsPerSec: (n / Math.max(1, out.doneAt - out.firstAt)) * 1000,
    clientCpuUsPerJob: (clientCpuMs * 1000) / n,
    serverCpuUsPerJob: serverCpuMs === null ? null : (serverCpuMs * 1000) / n,
  };
}

export function measureDrain(
  ctx: PhaseContext,
  system: SystemName,
  processes: number,
  heldXmin = false,
): Promise<DrainResult> {
  const n = ctx.flags.jobs;
  const sys = systemFor(system);
  return withDatabase(ctx, system, async (db) => {
    const holder = heldXmin ? await holdSnapshot(db.url) : undefined;
    try {
      await runChildren([{ system, url: db.url, scenario: { kind: 'fill', count: n } }]);
      const window = await openWriteWindow(db.url, sys.schema, holder ? [holder.pid] : []);
      const timed = await timedDrain(ctx, system, db, processes).catch(async (err: unknown) => {
        await window.discard();
        throw err;
      });
      const writes = await window.close(n);
      await sys.open(db.url);
      const leftover = await sys.pending();
      await sys.close();
      return { ...timed, processes, leftover, ...writes };
    } finally {
      await holder?.release();
    }
  });
}

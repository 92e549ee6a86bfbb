// The raw ceiling: bare claim/complete statements on the workhorse tables
// (see rawCeiling.ts), run in a child process like every system.
import { runChildren } from '../child/spawn.js';
import { withDatabase, type PhaseContext } from './context.js';

export interface RawResult {
  jobsPerSec: number;
  batch: number;
  loops: number;
  /** CPU the database's backends used per job, in microseconds; null when not measurable. */
  serverCpuUsPerJob: number | null;
  clientCpuUsPerJob: number;
  /** With several rounds (the reported one is the median): every round's jobs/s, in the order run. */
  rounds?: number[];
}

export function measureRawCeiling(ctx: PhaseContext): Promise<RawResult> {
  const n = ctx.flags.jobs;
  const batch = ctx.flags['raw-batch'];
  const loops = ctx.flags['raw-loops'];
  return withDatabase(ctx, 'workhorse', async (db) => {
    await runChildren([{ system: 'workhorse', url: db.url, scenario: { kind: 'fill', count: n } }]);
    const out = await runChildren([{ system: 'workhorse', url: db.url, scenario: { kind: 'raw', jobs: n, batch, loops } }], {
      timeoutMs: 300_000,
    });
    const r = out.results[0] as { handled: number; ms: number; clientCpuMs: number; serverCpuMs: number | null };
    if (r.handled !== n) throw new Error(`raw ceiling settled ${r.handled} of ${n} jobs`);
    return {
      jobsPerSec: (n / Math.max(1, r.ms)) * 1000,
      batch,
      loops,
      serverCpuUsPerJob: r.serverCpuMs === null ? null : (r.serverCpuMs * 1000) / n,
      clientCpuUsPerJob: (r.clientCpuMs * 1000) / n,
    };
  });
}

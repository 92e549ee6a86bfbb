// Tick cost: an empty tick's wall time and SQL round trips, and a tick that
// drains 1,000 jobs. The measurement itself lives in bench/tickCost.ts next
// to the tick; this phase only calls it on a fresh database, and says so
// plainly when that module is not there.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { withDatabase, type PhaseContext } from './context.js';

export type TickResult =
  | { available: true; emptyWallMs: number; emptyRoundTrips: number; drainJobsPerSec: number; drainJobs: number }
  | { available: false; reason: string };

interface TickCostModule {
  measureEmptyTick(connectionString: string): Promise<{ wallMs: number; roundTrips: number }>;
  measureTickDrain(connectionString: string, n: number): Promise<{ jobsPerSec: number }>;
}

const TICK_COST = fileURLToPath(new URL('../tickCost.ts', import.meta.url));
export const TICK_DRAIN_JOBS = 1_000;

export async function measureTick(ctx: PhaseContext): Promise<TickResult> {
  if (!existsSync(TICK_COST)) return { available: false, reason: 'bench/tickCost.ts is not present' };
  const mod = (await import(pathToFileURL(TICK_COST).href)) as Partial<TickCostModule>;
  if (typeof mod.measureEmptyTick !== 'function' || typeof mod.measureTickDrain !== 'function') {
    return { available: false, reason: 'bench/tickCost.ts does not export measureEmptyTick and measureTickDrain' };
  }
  const empty = await withDatabase(ctx, 'workhorse', (db) => mod.measureEmptyTick!(db.url));
  const drain = await withDatabase(ctx, 'workhorse', (db) => mod.measureTickDrain!(db.url, TICK_DRAIN_JOBS));
  return {
    available: true,
    emptyWallMs: empty.wallMs,
    emptyRoundTrips: empty.roundTrips,
    drainJobsPerSec: drain.jobsPerSec,
    drainJobs: TICK_DRAIN_JOBS,
  };
}

// Enqueue rate: N jobs in bulk (the system's batch insert, 5,000 per
// statement), then jobs one at a time, each its own statement and round
// trip, from one child process per system.
import { runChildren } from '../child/spawn.js';
import type { SystemName } from '../options.js';
import { withDatabase, type PhaseContext } from './context.js';

export interface EnqueueResult {
  bulkPerSec: number;
  singlePerSec: number;
}

export function measureEnqueue(ctx: PhaseContext, system: SystemName): Promise<EnqueueResult> {
  return withDatabase(ctx, system, async (db) => {
    const out = await runChildren([
      { system, url: db.url, scenario: { kind: 'enqueue', bulk: ctx.flags.jobs, single: ctx.flags['single-jobs'] } },
    ]);
    const r = out.results[0]!;
    return { bulkPerSec: Number(r.bulkPerSec), singlePerSec: Number(r.singlePerSec) };
  });
}

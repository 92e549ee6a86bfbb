// Enqueue-to-start latency: an idle, long-lived worker (LISTEN wake-ups
// where the system has them, polling otherwise) and jobs enqueued one at a
// time 10-30 ms apart from the same process, so both timestamps come from
// one clock.
import { runChildren } from '../child/spawn.js';
import type { SystemName } from '../options.js';
import type { Percentiles } from '../stats.js';
import { withDatabase, type PhaseContext } from './context.js';

export type LatencyResult = Percentiles & { missing: number };

export function measureLatency(ctx: PhaseContext, system: SystemName): Promise<LatencyResult> {
  return withDatabase(ctx, system, async (db) => {
    const out = await runChildren([
      {
        system,
        url: db.url,
        scenario: {
          kind: 'latency',
          concurrency: ctx.flags.concurrency,
          prefetch: ctx.flags.prefetch,
          batch: ctx.flags['pgboss-batch'],
          samples: ctx.flags['latency-samples'],
        },
      },
    ]);
    return out.results[0] as unknown as LatencyResult;
  });
}

// A worker that fires schedule slots (scheduleNamespaces), stopped while its
// server hangs with a slot pass in flight. The slot runner's statements ran
// on the bare pool with no bound, and its stop waited for the pass: stop()
// (and a SIGTERMed `workhorse worker`, until its drain deadline) never
// returned while the server hung. Its statements are now bounded calls, and
// the stop returns within the same bound as a worker without schedules.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startOwnCluster, type OwnCluster } from '../../certify/ownCluster.js';
import { createClient, defineJob, Worker } from '../../src/index.js';
import { SHUTDOWN_BOUND_MS } from '../../src/worker/core.js';

const Ping = defineJob({ type: 'slotfrozen.ping', queue: 'slotq', schema: z.object({}) });
let cluster: OwnCluster;

beforeAll(async () => {
  cluster = await startOwnCluster();
}, 60_000);

afterAll(async () => {
  cluster?.thaw();
  await cluster?.destroy();
});

describe('stopping a worker whose slot pass hangs', () => {
  it('returns within the shutdown bound', async () => {
    const client = createClient({ connectionString: cluster.url(), jobs: [Ping] });
    await client.migrate();
    const worker = new Worker(client, { queue: 'slotq', heartbeatMs: 1000, pollMs: 100, scheduleNamespaces: ['default'] });
    worker.handle(Ping, async () => null);
    worker.events.on('error', () => undefined);
    const run = worker.run();
    await new Promise((r) => setTimeout(r, 2_000));
    cluster.freeze();
    try {
      // Several slot passes (every 500 ms) have started on pooled connections the server no longer answers.
      await new Promise((r) => setTimeout(r, 2_000));
      const start = Date.now();
      const outcome = await Promise.race([
        worker.stop().then(() => 'stopped'),
        new Promise((r) => setTimeout(() => r('still stopping after 40 s'), 40_000)),
      ]);
      expect(outcome).toBe('stopped');
      expect(Date.now() - start).toBeLessThan(SHUTDOWN_BOUND_MS + 10_000);
      await run;
    } finally {
      cluster.thaw();
      await client.close();
    }
  }, 120_000);
});

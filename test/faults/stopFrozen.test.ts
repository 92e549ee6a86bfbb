// A worker stopped while its server hangs (every PostgreSQL process of a
// private cluster SIGSTOPped: connections are accepted, nothing answers).
// Deregistration is a courtesy (the leases left behind expire and are
// recovered), so stop() gives up on it, and on a beat or a claim in flight,
// within SHUTDOWN_BOUND_MS instead of waiting as long as a protocol call may
// (60 s or the lease a try, then the pool's connect timeout for each of the
// other tries: about 107 s at a 1 s heartbeat, minutes at the defaults).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startOwnCluster, type OwnCluster } from '../../certify/ownCluster.js';
import { createClient, DatabaseUnavailableError, defineJob, Worker } from '../../src/index.js';
import { SHUTDOWN_BOUND_MS } from '../../src/worker/core.js';

const Ping = defineJob({ type: 'stop.ping', queue: 'stopq', schema: z.object({}) });
let cluster: OwnCluster;

beforeAll(async () => {
  cluster = await startOwnCluster();
}, 60_000);

afterAll(async () => {
  cluster?.thaw();
  await cluster?.destroy();
});

/** How long worker.stop() took; fails the test if it is still stopping after 40 s. */
async function stopTime(worker: Worker): Promise<number> {
  const start = Date.now();
  const outcome = await Promise.race([
    worker.stop().then(() => 'stopped'),
    new Promise((r) => setTimeout(() => r('still stopping after 40 s'), 40_000)),
  ]);
  expect(outcome).toBe('stopped');
  return Date.now() - start;
}

describe('stopping a worker against a frozen server', () => {
  it('returns within the deregistration bound, reporting that deregistration failed', async () => {
    const client = createClient({ connectionString: cluster.url(), jobs: [Ping] });
    await client.migrate();
    const worker = new Worker(client, { queue: 'stopq', heartbeatMs: 1000, pollMs: 200 });
    worker.handle(Ping, async () => null);
    const errors: unknown[] = [];
    worker.events.on('error', (e) => errors.push(e));
    const run = worker.run();
    const enqueued = await client.enqueue(Ping, {});
    for (let i = 0; i < 100 && (await client.getJob(enqueued.id))?.status !== 'succeeded'; i++) await new Promise((r) => setTimeout(r, 100));
    expect((await client.getJob(enqueued.id))?.status).toBe('succeeded');
    cluster.freeze();
    try {
      // The beat in flight (at most its 4 s lease), the wake listener's close (2 s), then
      // deregistration tries until the shutdown bound.
      expect(await stopTime(worker)).toBeLessThan(SHUTDOWN_BOUND_MS + 10_000);
      await run;
      // What it gave up on was reported: the beat and the deregistration, both database faults.
      expect(errors.length).toBeGreaterThanOrEqual(2);
      expect(errors.every((e) => e instanceof DatabaseUnavailableError)).toBe(true);
    } finally {
      cluster.thaw();
      await client.close();
    }
  }, 120_000);

  it('stops a worker that fires the schedule slots within the same bound: its companion stops beside it, not before it', async () => {
    const client = createClient({ connectionString: cluster.url(), jobs: [Ping] });
    await client.migrate();
    const worker = new Worker(client, { queue: 'stopq', heartbeatMs: 1000, pollMs: 200, scheduleNamespaces: ['default', 'sys'] });
    worker.handle(Ping, async () => null);
    worker.events.on('error', () => undefined);
    const run = worker.run();
    // Until the slot runner and the system worker have registered beside it.
    for (let i = 0; i < 100; i++) {
      const n = (await client.pool.query<{ n: number }>('select count(*)::int as n from workhorse.worker_registry')).rows[0]!.n;
      if (n >= 2) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    cluster.freeze();
    try {
      // One after the other, the two stops took about 49 s.
      expect(await stopTime(worker)).toBeLessThan(SHUTDOWN_BOUND_MS + 10_000);
      await run;
    } finally {
      cluster.thaw();
      await client.close();
    }
  }, 120_000);
});

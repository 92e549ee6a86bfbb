// A claim that commits after its connection is lost: the worker never hears
// its answer, so it never learns of the leases it took. The jobs it would
// have started at once were marked started, and once their leases expired
// recovery counted an attempt for handlers that never ran: a job with
// maxAttempts 1 failed without running. The next heartbeat after a failed
// claim now hands back the leases the worker does not hold, unstarted: the
// jobs run (once each) without losing an attempt. Only leases taken since
// the lost claim are released: a second process with the same worker id
// keeps its older ones.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createClient, defineJob, Worker, type Client } from '../../src/index.js';
import { sleep, waitFor } from '../helpers/wait.js';
import { useFaultCluster } from './harness.js';

const Once = defineJob({ type: 'lost.once', schema: z.object({ n: z.number() }), retry: { maxAttempts: 1 } });

const faultCluster = useFaultCluster();
let client: Client;
/** Enqueues and reads past the proxy. */
let direct: Client;

beforeAll(async () => {
  const { cluster, proxyPort } = faultCluster();
  direct = createClient({ connectionString: cluster.url(), jobs: [Once], poolMax: 2 });
  await direct.migrate();
  client = createClient({ connectionString: `postgres://postgres@127.0.0.1:${proxyPort}/postgres`, jobs: [Once], poolMax: 4, callTimeoutMs: 2000 });
});

afterAll(async () => {
  await client?.close();
  await direct?.close();
});

describe('a claim whose answer is lost with its connection', () => {
  it('hands its leases back at the next heartbeat: every job runs once, no attempt lost', async () => {
    const ran: number[] = [];
    const worker = new Worker(client, { heartbeatMs: 1000, pollMs: 100, listen: false, concurrency: 4 });
    worker.events.on('error', () => undefined);
    worker.handle(Once, async ({ n }) => {
      ran.push(n);
      return n;
    });
    const run = worker.run();
    try {
      await sleep(500);
      const { proxy } = faultCluster();
      proxy.dropAnswers(true);
      const jobs = await direct.enqueueMany(Array.from({ length: 8 }, (_, n) => ({ job: Once, payload: { n } })));
      // A poll's claim commits; its answer never arrives.
      await waitFor(
        async () => (await direct.pool.query('select count(*)::int n from workhorse.job_runtime')).rows[0].n,
        (n) => n > 0,
        { what: 'a claim to lease the jobs' },
      );
      proxy.dropAll();
      proxy.dropAnswers(false);
      const ids = jobs.map((j) => j.id);
      const rows = await waitFor(
        async () => (await direct.pool.query<{ status: string; attempt: number }>('select status, attempt from workhorse.jobs where id = any($1::bigint[])', [ids])).rows,
        (rs) => rs.every((r) => r.status === 'succeeded' || r.status === 'failed'),
        { what: 'every job to end', timeoutMs: 30_000 },
      );
      expect(rows.map((r) => [r.status, r.attempt])).toEqual(ids.map(() => ['succeeded', 1]));
      expect([...ran].sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      const orphaned = await direct.pool.query("select count(*)::int n from workhorse.job_attempts where outcome = 'orphaned'");
      expect(orphaned.rows[0].n).toBeGreaterThan(0);
    } finally {
      await worker.stop({ hard: true });
      await run;
    }
  }, 60_000);

  it('releases only the leases taken since the lost claim: a second process given the same worker id keeps its older ones', async () => {
    const Hold = defineJob({ type: 'lost.hold', schema: z.object({}) });
    const jobs = await direct.enqueueMany([{ job: Hold, payload: {} }, { job: Hold, payload: {} }]);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const twin = new Worker(direct, { workerId: 'twin', heartbeatMs: 60_000, listen: false, concurrency: 2 });
    twin.handle(Hold, () => held);
    const run = twin.run();
    try {
      await waitFor(
        async () => (await direct.pool.query("select count(*)::int n from workhorse.job_runtime where worker_id = 'twin'")).rows[0].n,
        (n) => n === 2,
        { what: 'both jobs leased' },
      );
      const [older, recent] = jobs.map((j) => j.id);
      await direct.pool.query("update workhorse.job_runtime set claimed_at = now() - interval '10 minutes' where job_id = $1", [older]);
      // The other process with that id lost a claim sent 3 s ago: its beat knows none of these leases.
      await direct.pool.query("select * from workhorse.heartbeat_many_v1('default', 'twin', '{}'::bigint[], '{}'::bigint[], 0, 60000, 0, null, 5000)");
      const leases = await direct.pool.query<{ id: string; expired: boolean }>(
        "select job_id::text as id, expires_at < now() as expired from workhorse.job_runtime where worker_id = 'twin' order by job_id",
      );
      expect(leases.rows).toEqual([
        { id: older, expired: false },
        { id: recent, expired: true },
      ]);
    } finally {
      release();
      await twin.stop({ hard: true });
      await run;
    }
  });
});

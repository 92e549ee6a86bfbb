// A heartbeat that lands on a stranded connection (a server that vanished
// without a reset; new connections flow) while the database is healthy. A
// beat was given the whole lease, so by the time it gave up every lease it
// carried had expired: a healthy worker lost its running jobs, and a job
// with maxAttempts 1 failed with LeaseExpired. A beat now gets one heartbeat
// interval; the cut connection is destroyed and the beat tried again on a
// new one while the leases still hold.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createClient, defineJob, Worker, type Client } from '../../src/index.js';
import { sleep, waitFor } from '../helpers/wait.js';
import { useFaultCluster } from './harness.js';

const Long = defineJob({ type: 'hb.long', schema: z.object({}), retry: { maxAttempts: 1 } });

const faultCluster = useFaultCluster();
let client: Client;
/** Reads the job past the proxy. */
let observer: Client;

beforeAll(async () => {
  const { cluster, proxyPort } = faultCluster();
  client = createClient({ connectionString: `postgres://postgres@127.0.0.1:${proxyPort}/postgres`, jobs: [Long], poolMax: 2 });
  await client.migrate();
  observer = createClient({ connectionString: cluster.url(), jobs: [Long], poolMax: 1 });
});

afterAll(async () => {
  await client?.close();
  await observer?.close();
});

describe('a heartbeat on a stranded connection', () => {
  it('is cut after one interval and beats again on a new connection before the leases expire: the running job keeps its lease', async () => {
    const { id } = await client.enqueue(Long, {});
    let started = false;
    const worker = new Worker(client, { heartbeatMs: 1500, pollMs: 200, listen: false });
    worker.events.on('error', () => undefined);
    worker.handle(Long, async (_p, ctx) => {
      started = true;
      await sleep(9000);
      if (ctx.signal.aborted) throw ctx.signal.reason;
      return 'done';
    });
    const run = worker.run();
    try {
      await waitFor(() => started, (s) => s, { what: 'the handler to start' });
      await sleep(200);
      // Every connection open now stops answering for good; new ones flow.
      faultCluster().proxy.strandOpen();
      const job = await waitFor(() => observer.getJob(id), (j) => j?.status === 'succeeded' || j?.status === 'failed', { what: 'the job to end', timeoutMs: 40_000 });
      expect([job!.status, job!.attempt, job!.result]).toEqual(['succeeded', 1, 'done']);
    } finally {
      await worker.stop({ hard: true });
      await run;
    }
  }, 60_000);
});

// The LISTEN connection is replaced after a server restart and listens
// again: an idle worker whose safety poll is two minutes away still picks a
// new job up at once after the restart.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { migrate } from '../../src/db/migrate.js';
import { startOwnCluster, type OwnCluster } from '../../certify/ownCluster.js';
import { onServer, withDatabase } from '../../certify/run.js';
import { Worker } from '../../src/worker/worker.js';
import { waitFor } from '../helpers/wait.js';

const Ping = defineJob({ type: 'relisten.ping', schema: z.object({ n: z.number() }) });

let cluster: OwnCluster;
let url: string;

beforeAll(async () => {
  cluster = await startOwnCluster();
  const name = `wh_relisten_${randomBytes(4).toString('hex')}`;
  await onServer(cluster.url(), `create database ${name}`);
  url = withDatabase(cluster.url(), name);
  await migrate({ connectionString: url });
});
afterAll(async () => {
  await cluster?.destroy();
});

describe('the wake listener', () => {
  it('listens again after the server restarts, so an idle worker wakes on the next enqueue, not the poll', async () => {
    const client = createClient({ connectionString: url, jobs: [Ping] });
    const worker = new Worker(client, { heartbeatMs: 500, pollMs: 120_000 });
    const errors: unknown[] = [];
    worker.events.on('error', (e) => errors.push(e));
    const started: number[] = [];
    worker.handle(Ping, (p) => {
      started.push(p.n);
    });
    const run = worker.run();
    try {
      await client.enqueue(Ping, { n: 1 });
      await waitFor(() => started.length, (n) => n === 1, { what: 'the first job' });
      await cluster.restart('fast');
      // The listener's backoff starts at a quarter second; give it a moment to reconnect.
      await new Promise((r) => setTimeout(r, 3000));
      await client.enqueue(Ping, { n: 2 });
      // Well inside the two-minute poll: only a wake hint can start it this soon.
      const n = await waitFor(() => started.length, (k) => k === 2, { what: 'the job enqueued after the restart', timeoutMs: 30_000 });
      expect(n).toBe(2);
    } finally {
      await worker.stop();
      await run;
      await client.close();
    }
  }, 90_000);
});

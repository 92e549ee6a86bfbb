// A lock_timeout set on the database or the role (a common guard) while
// another session holds a lock on workhorse.jobs for a little longer (a
// CREATE INDEX, an ALTER TABLE): a settlement that waits for the lock is
// refused with 55P03 lock_not_available. The settler treated that as a
// refusal of the batch and gave the outcomes up, so a handler that had
// succeeded was left to recovery, which counted its attempt and ran it
// again, or failed the job on its last attempt. It is now written again for
// a lease window, like a cancelled statement: the lock ends, the outcome is
// written, no attempt is counted.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startOwnCluster, type OwnCluster } from '../../certify/ownCluster.js';
import { createClient, defineJob, Worker } from '../../src/index.js';
import { sleep, waitFor } from '../helpers/wait.js';

const Once = defineJob({ type: 'locktimeout.once', schema: z.object({}), retry: { maxAttempts: 1 } });
let cluster: OwnCluster;

beforeAll(async () => {
  cluster = await startOwnCluster();
}, 60_000);

afterAll(async () => {
  await cluster?.destroy();
});

describe('a settlement refused by lock_timeout while another session holds a lock on workhorse.jobs', () => {
  it('is written once the lock ends: the job succeeds on its only attempt and runs once', async () => {
    const admin = new pg.Client({ connectionString: cluster.url() });
    await admin.connect();
    await admin.query(`create database locktimeout`);
    const url = cluster.url('locktimeout');
    const setup = createClient({ connectionString: url, jobs: [Once] });
    await setup.migrate();
    await setup.close();
    await admin.query(`alter database locktimeout set lock_timeout = '200ms'`);
    const client = createClient({ connectionString: url, jobs: [Once] });
    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    await locker.query('set lock_timeout = 0');
    let runs = 0;
    let started = false;
    const worker = new Worker(client, { heartbeatMs: 5_000, pollMs: 100 });
    worker.events.on('error', () => undefined);
    worker.handle(Once, async () => {
      runs++;
      started = true;
      await sleep(1_000);
      return { ok: true };
    });
    const run = worker.run();
    try {
      const { id } = await client.enqueue(Once, {});
      await waitFor(() => started, Boolean, { what: 'the handler to start' });
      await locker.query('begin');
      await locker.query('lock table workhorse.jobs in share mode');
      await sleep(3_000); // the handler finished meanwhile; its settlement waited for the lock
      await locker.query('commit');
      const job = await waitFor(
        async () => (await client.getJob(id))?.status,
        (s) => s === 'succeeded' || s === 'failed',
        { what: 'the job to end', timeoutMs: 40_000 },
      );
      expect(job).toBe('succeeded');
      expect(runs).toBe(1);
    } finally {
      await locker.end().catch(() => undefined);
      await worker.stop();
      await run;
      await client.close();
      await admin.end();
    }
  }, 90_000);
});

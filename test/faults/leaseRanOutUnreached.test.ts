// A running job whose lease runs out while the database cannot be reached:
// the worker gives the lease up itself (its heartbeats never arrived, so
// recovery may hand the job to another worker). It used to say "heartbeat
// refused: ... is no longer leased by this owner" and that the job "was
// recovered or ended by an operator", neither of which the database had
// said, and a drain that lost the outcome this way said "drained; exiting
// 0". The line now says the lease ran out unreached, and the outcome
// counts as given up: the drain exits 3.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { TcpProxy } from '../../certify/tcpProxy.js';
import { createClient, defineJob, StaleLeaseError, type Client } from '../../src/index.js';
import { EXIT_OUTCOMES_DROPPED, runWorkerProcess, stopReport } from '../../src/worker/process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { sleep, waitFor } from '../helpers/wait.js';

const Slow = defineJob({ type: 'unreached.slow', schema: z.object({}) });
let db: TestDatabase;
let proxy: TcpProxy;
let client: Client;
let proxyUrl: string;

beforeAll(async () => {
  db = await createTestDatabase();
  const target = new URL(db.url);
  proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
  const url = new URL(db.url);
  url.port = String(await proxy.start());
  proxyUrl = url.toString();
  client = createClient({ connectionString: proxyUrl, jobs: [Slow], poolMax: 4 });
});

afterAll(async () => {
  await client?.close();
  await proxy?.close();
  await db?.drop();
});

describe('a lease that runs out while the database cannot be reached', () => {
  it('is reported as run out unreached, and a drain that lost its outcome so exits 3', async () => {
    const { id } = await client.enqueue(Slow, {});
    let started = false;
    const stale: StaleLeaseError[] = [];
    const proc = await runWorkerProcess(
      {
        client: () => client,
        workers: [
          {
            // A 250 ms heartbeat: a 1 s lease.
            options: { concurrency: 1, pollMs: 50, heartbeatMs: 250 },
            configure: (w) => {
              w.events.on('error', () => undefined);
              w.events.on('stale', (e) => stale.push(e));
              w.handle(Slow, async () => {
                started = true;
                await sleep(2_500);
                return 'done';
              });
            },
          },
        ],
      },
      { log: () => undefined },
    );
    await waitFor(() => started, Boolean, { what: 'the handler to start' });
    proxy.refuse(true);
    proxy.dropAll();
    proc.shutdown('SIGTERM');
    await waitFor(() => stale.length, (n) => n === 1, { timeoutMs: 10_000, what: 'the lease to be given up' });
    proxy.refuse(false);
    expect(await proc.done).toBe('drained');

    expect(stale[0]!.expiredMs).toBe(1_000);
    expect(stale[0]!.message).toBe(`lease of job ${id} execution ${stale[0]!.execution} ran out: no heartbeat reached the database for its whole lease (1000 ms)`);
    expect(proc.droppedOutcomes()).toEqual({ total: 1, duringDrain: 1 });
    expect(stopReport('drained', proc.droppedOutcomes()).code).toBe(EXIT_OUTCOMES_DROPPED);
    // Nothing of the attempt was written: the job is left to recovery.
    expect((await db.pool.query<{ status: string }>('select status from workhorse.jobs where id = $1', [id])).rows[0]!.status).toBe('ready');
  }, 30_000);

  it('does not count as given up an outcome whose settlement was in flight and is written once the database answers again', async () => {
    // The first test's process closed its client: this one gets its own, through the proxy.
    const client = createClient({ connectionString: proxyUrl, jobs: [Slow], poolMax: 4 });
    const direct = createClient({ connectionString: db.url, jobs: [Slow], poolMax: 1 });
    const { id } = await direct.enqueue(Slow, {});
    await direct.close();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started = false;
    const stale: StaleLeaseError[] = [];
    const proc = await runWorkerProcess(
      {
        client: () => client,
        workers: [
          {
            options: { concurrency: 1, pollMs: 50, heartbeatMs: 250 },
            configure: (w) => {
              w.events.on('error', () => undefined);
              w.events.on('stale', (e) => stale.push(e));
              w.handle(Slow, async () => {
                started = true;
                await gate;
                return 'written late';
              });
            },
          },
        ],
      },
      { log: () => undefined },
    );
    await waitFor(() => started, Boolean, { what: 'the handler to start' });
    proxy.refuse(true);
    proxy.dropAll();
    // The handler returns while the database cannot be reached: its settlement retries through a stall of
    // more than its whole 1 s lease, and nothing else takes the job meanwhile.
    release();
    await sleep(2_500);
    proxy.refuse(false);
    await waitFor(
      async () => (await db.pool.query<{ status: string }>('select status from workhorse.jobs where id = $1', [id])).rows[0]!.status,
      (st) => st === 'succeeded',
      { timeoutMs: 15_000, what: 'the late settlement to be written' },
    );
    proc.shutdown('SIGTERM');
    expect(await proc.done).toBe('drained');
    expect(stale).toEqual([]);
    expect(proc.droppedOutcomes()).toEqual({ total: 0, duringDrain: 0 });
    expect(stopReport('drained', proc.droppedOutcomes()).code).toBe(0);
  }, 30_000);
});

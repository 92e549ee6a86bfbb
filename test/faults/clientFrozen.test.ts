// The client's own calls against a hung server: every PostgreSQL process of
// a private cluster is SIGSTOPped, so connections stay open and new ones are
// accepted by the kernel but nothing is ever answered. A call on a pooled
// connection used to wait forever (TCP keepalive sees a live peer), and
// close() with it; each call is now bounded by `callTimeoutMs` and fails with
// DatabaseUnavailableError, and once the server runs again the client works.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { startOwnCluster, type OwnCluster } from '../../certify/ownCluster.js';
import { createClient, defineJob, type Client } from '../../src/index.js';
import { DatabaseUnavailableError } from '../../src/errors.js';
import { ENQUEUE_CHUNK_ITEMS } from '../../src/client/enqueueChunks.js';
import { migrate } from '../../src/db/migrate.js';

const Job = defineJob({ type: 'frozen.job', schema: z.object({ n: z.number() }), queue: 'frozen' });
const BOUND = 2000;
let cluster: OwnCluster;
let client: Client;

async function timed<T>(call: () => Promise<T>): Promise<{ ms: number; error: unknown }> {
  const start = Date.now();
  // The test's own cap: a call that never settles shows up as this error.
  const cap = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('still waiting after 15 s')), 15_000));
  try {
    await Promise.race([call(), cap]);
    return { ms: Date.now() - start, error: undefined };
  } catch (error) {
    return { ms: Date.now() - start, error };
  }
}

beforeAll(async () => {
  cluster = await startOwnCluster();
  await migrate({ connectionString: cluster.url() });
}, 60_000);

afterEach(async () => {
  cluster?.thaw();
  await client?.close();
});

afterAll(async () => {
  await cluster?.destroy();
});

describe('the client against a frozen server', () => {
  it('fails each call on a pooled connection with DatabaseUnavailableError within callTimeoutMs, and works again after', async () => {
    client = createClient({ connectionString: cluster.url(), jobs: [Job], callTimeoutMs: BOUND, poolMax: 2 });
    const { id } = await client.enqueue(Job, { n: 1 }); // leaves pooled connections, idle now
    cluster.freeze();
    const calls: [string, () => Promise<unknown>][] = [
      ['enqueue', () => client.enqueue(Job, { n: 2 })],
      ['getJob', () => client.getJob(id)],
      ['listJobs', () => client.admin.listJobs({})],
      ['cancel', () => client.cancel(id)],
      ['publish', () => client.publish('frozen.topic', { n: 1 })],
    ];
    for (const [name, call] of calls) {
      const r = await timed(call);
      expect(r.error, name).toBeInstanceOf(DatabaseUnavailableError);
      expect(r.ms, name).toBeLessThan(2 * BOUND + 1500);
    }
    cluster.thaw();
    expect((await client.enqueue(Job, { n: 3 })).created).toBe(true);
    expect((await client.getJob(id))?.status).toBe('ready');
  }, 60_000);

  it('bounds a multi-statement enqueueMany and its transaction the same way', async () => {
    client = createClient({ connectionString: cluster.url(), jobs: [Job], callTimeoutMs: BOUND, poolMax: 1 });
    await client.enqueue(Job, { n: 0 });
    cluster.freeze();
    const items = Array.from({ length: ENQUEUE_CHUNK_ITEMS + 1 }, (_, n) => ({ job: Job, payload: { n } }));
    const r = await timed(() => client.enqueueMany(items));
    expect(r.error).toBeInstanceOf(DatabaseUnavailableError);
    expect(r.ms).toBeLessThan(2 * BOUND + 1500);
    cluster.thaw();
    const done = await client.enqueueMany(items);
    expect(done).toHaveLength(items.length);
  }, 60_000);

  it('lets close() finish while a call is stuck, once the call is bounded', async () => {
    client = createClient({ connectionString: cluster.url(), jobs: [Job], callTimeoutMs: BOUND });
    await client.enqueue(Job, { n: 1 });
    cluster.freeze();
    const stuck = client.enqueue(Job, { n: 2 }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 200));
    const closed = await timed(() => client.close());
    expect(closed.error).toBeUndefined();
    expect(closed.ms).toBeLessThan(BOUND + 1500);
    expect(await stuck).toBeInstanceOf(DatabaseUnavailableError);
  }, 30_000);

  it('bounds calls by 30 s unless told otherwise', async () => {
    client = createClient({ connectionString: cluster.url(), jobs: [Job] });
    await client.enqueue(Job, { n: 1 });
    cluster.freeze();
    const start = Date.now();
    const error = await client.getJob('1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    expect(Date.now() - start).toBeGreaterThanOrEqual(29_000);
    expect(Date.now() - start).toBeLessThan(35_000);
  }, 60_000);
});

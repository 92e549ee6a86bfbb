// workhorse under benchmark: the public client and Worker, configured the
// way a user would for throughput (a claim buffer via `prefetch`, LISTEN
// wake-ups, a normal heartbeat), with every guarantee left on.
import { z } from 'zod';
import { Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { migrate } from '../../src/db/migrate.js';
import * as protocol from '../../src/db/protocol.js';
import { Worker } from '../../src/worker/worker.js';
import { BULK_CHUNK, NOOP, QUEUE, type QueueSystem, type RunningWorker, type WorkerSettings } from './system.js';

const noopJob = defineJob({ type: NOOP, queue: QUEUE, schema: z.object({ i: z.number().int() }) });

export class WorkhorseSystem implements QueueSystem {
  readonly name = 'workhorse';
  readonly schema = 'workhorse';
  private client: Client | undefined;

  async install(url: string): Promise<void> {
    await migrate({ connectionString: url });
  }

  async open(url: string): Promise<void> {
    this.client = new Client({ connectionString: url, poolMax: 4, jobs: [noopJob] });
    await this.client.ready();
  }

  private get c(): Client {
    if (!this.client) throw new Error('workhorse bench client is not open');
    return this.client;
  }

  async enqueueBulk(from: number, count: number): Promise<void> {
    for (let at = 0; at < count; at += BULK_CHUNK) {
      const n = Math.min(BULK_CHUNK, count - at);
      const items = Array.from({ length: n }, (_, k) => ({ job: noopJob, payload: { i: from + at + k } }));
      await this.c.enqueueMany(items);
    }
  }

  async enqueueOne(i: number): Promise<void> {
    await this.c.enqueue(noopJob, { i });
  }

  async startWorker(url: string, s: WorkerSettings): Promise<RunningWorker> {
    const client = new Client({ connectionString: url, poolMax: 6, jobs: [noopJob] });
    const worker = new Worker(client, {
      queue: QUEUE,
      concurrency: s.concurrency,
      prefetch: s.prefetch,
      heartbeatMs: 30_000,
      listen: true,
    });
    worker.handle(noopJob, (payload) => {
      s.onStart(payload);
    });
    worker.events.on('error', (err) => console.error('[bench workhorse]', err));
    const running = worker.run();
    return {
      async stop() {
        await worker.stop();
        await running;
        await client.close();
      },
    };
  }

  async pending(): Promise<number> {
    const queues = await protocol.listQueues(this.c.pool, this.c.namespace);
    return queues.reduce((n, q) => n + q.ready + q.running + q.waiting, 0);
  }

  async close(): Promise<void> {
    await this.client?.close();
    this.client = undefined;
  }
}

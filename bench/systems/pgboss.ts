// pg-boss under benchmark, in its best documented configuration for
// throughput: batched fetch (`batchSize`), continuous fetching while
// batches come back full (`burstWhenBatchFull`), LISTEN/NOTIFY wake-ups on
// a notify-enabled queue, and the shortest allowed polling interval.
// Maintenance and scheduling are off so only the work loop is measured.
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { NOOP, BULK_CHUNK, type QueueSystem, type RunningWorker, type WorkerSettings } from './system.js';

/** pg-boss workers per process: enough handlers in flight to match `concurrency` jobs. */
export function pgbossLocalConcurrency(concurrency: number, batch: number): number {
  return Math.max(1, Math.ceil(concurrency / Math.max(1, Math.floor(batch / 4))));
}

function newBoss(url: string, max: number): PgBoss {
  const boss = new PgBoss({
    connectionString: url,
    max,
    supervise: false,
    schedule: false,
    useListenNotify: true,
  });
  boss.on('error', (err) => console.error('[bench pg-boss]', err));
  return boss;
}

export class PgBossSystem implements QueueSystem {
  readonly name = 'pg-boss';
  readonly schema = 'pgboss';
  private boss: PgBoss | undefined;
  private pool: pg.Pool | undefined;

  async install(url: string): Promise<void> {
    const boss = newBoss(url, 2);
    await boss.start();
    await boss.createQueue(NOOP, { notify: true });
    await boss.stop({ graceful: false, close: true });
  }

  async open(url: string): Promise<void> {
    this.boss = newBoss(url, 4);
    await this.boss.start();
    this.pool = new pg.Pool({ connectionString: url, max: 2 });
    this.pool.on('error', () => undefined);
  }

  private get b(): PgBoss {
    if (!this.boss) throw new Error('pg-boss bench instance is not open');
    return this.boss;
  }

  async enqueueBulk(from: number, count: number): Promise<void> {
    for (let at = 0; at < count; at += BULK_CHUNK) {
      const n = Math.min(BULK_CHUNK, count - at);
      await this.b.insert(NOOP, Array.from({ length: n }, (_, k) => ({ data: { i: from + at + k } })));
    }
  }

  async enqueueOne(i: number): Promise<void> {
    await this.b.send(NOOP, { i });
  }

  async startWorker(url: string, s: WorkerSettings): Promise<RunningWorker> {
    const localConcurrency = pgbossLocalConcurrency(s.concurrency, s.batch);
    const boss = newBoss(url, localConcurrency + 4);
    await boss.start();
    await boss.work<{ i: number }>(
      NOOP,
      { batchSize: s.batch, localConcurrency, pollingIntervalSeconds: 0.5, burstWhenBatchFull: true },
      async (jobs) => {
        for (const j of jobs) s.onStart(j.data);
      },
    );
    return {
      async stop() {
        await boss.stop({ graceful: true, close: true, timeout: 30_000 });
      },
    };
  }

  async pending(): Promise<number> {
    if (!this.pool) throw new Error('pg-boss bench pool is not open');
    const r = await this.pool.query<{ n: string }>(
      `select count(*) as n from pgboss.job where name = $1 and state in ('created', 'retry', 'active')`,
      [NOOP],
    );
    return Number(r.rows[0]!.n);
  }

  async close(): Promise<void> {
    await this.boss?.stop({ graceful: false, close: true });
    await this.pool?.end();
    this.boss = undefined;
    this.pool = undefined;
  }
}

// graphile-worker under benchmark, in its best documented configuration for
// throughput: a local queue of 500 (batched fetch) and batched completion
// with no delay (`completeJobBatchDelay: 0`, `failJobBatchDelay: 0`),
// LISTEN/NOTIFY wake-ups as it ships. Jobs get no `queueName` (a named
// graphile queue runs its jobs one at a time).
import pg from 'pg';
import { Logger, makeWorkerUtils, run, runMigrations, type WorkerUtils } from 'graphile-worker';
import { BULK_CHUNK, NOOP, type QueueSystem, type RunningWorker, type WorkerSettings } from './system.js';

const silent = new Logger(() => () => undefined);

/**
 * A pool of our own for graphile-worker. Given a connection string it makes
 * its own pool, and on release removes the pool's error handlers before the
 * pool has ended; a database dropped `with (force)` right after then kills
 * an idle connection with no listener and the process with it. This pool's
 * listeners stay until it has ended. Same size as graphile-worker's default.
 */
function ownPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  pool.on('error', () => undefined);
  pool.on('connect', (c) => c.on('error', () => undefined));
  return pool;
}

export const GRAPHILE_LOCAL_QUEUE = 500;

export class GraphileSystem implements QueueSystem {
  readonly name = 'graphile-worker';
  readonly schema = 'graphile_worker';
  private utils: WorkerUtils | undefined;
  private utilsPool: pg.Pool | undefined;
  private pool: pg.Pool | undefined;

  async install(url: string): Promise<void> {
    await runMigrations({ connectionString: url, logger: silent });
  }

  async open(url: string): Promise<void> {
    this.utilsPool = ownPool(url);
    this.utils = await makeWorkerUtils({ pgPool: this.utilsPool, logger: silent });
    this.pool = new pg.Pool({ connectionString: url, max: 2 });
    this.pool.on('error', () => undefined);
  }

  private get u(): WorkerUtils {
    if (!this.utils) throw new Error('graphile bench utils are not open');
    return this.utils;
  }

  async enqueueBulk(from: number, count: number): Promise<void> {
    for (let at = 0; at < count; at += BULK_CHUNK) {
      const n = Math.min(BULK_CHUNK, count - at);
      await this.u.addJobs(Array.from({ length: n }, (_, k) => ({ identifier: NOOP, payload: { i: from + at + k } })));
    }
  }

  async enqueueOne(i: number): Promise<void> {
    await this.u.addJob(NOOP, { i });
  }

  async startWorker(url: string, s: WorkerSettings): Promise<RunningWorker> {
    const pool = ownPool(url);
    const runner = await run({
      pgPool: pool,
      concurrency: s.concurrency,
      noHandleSignals: true,
      pollInterval: 1000,
      logger: silent,
      taskList: {
        [NOOP]: async (payload) => {
          s.onStart(payload);
        },
      },
      preset: {
        worker: {
          localQueue: { size: GRAPHILE_LOCAL_QUEUE },
          completeJobBatchDelay: 0,
          failJobBatchDelay: 0,
        },
      },
    });
    return {
      async stop() {
        await runner.stop();
        await pool.end();
      },
    };
  }

  async pending(): Promise<number> {
    if (!this.pool) throw new Error('graphile bench pool is not open');
    const r = await this.pool.query<{ n: string }>('select count(*) as n from graphile_worker.jobs');
    return Number(r.rows[0]!.n);
  }

  async close(): Promise<void> {
    await this.utils?.release();
    await this.utilsPool?.end();
    await this.pool?.end();
    this.utils = undefined;
    this.utilsPool = undefined;
    this.pool = undefined;
  }
}

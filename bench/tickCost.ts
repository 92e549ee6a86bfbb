// The cost of a serverless tick: an empty tick's wall time and its SQL round
// trips from register to deregister (counted by wrapping the pool's query,
// through which every protocol call of the tick goes), and the rate at which
// one tick drains a backlog of no-op jobs. `npm run bench` calls the two
// functions; `npx tsx bench/tickCost.ts` prints them on its own, against
// DATABASE_URL or an embedded PostgreSQL with durable settings.
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { z } from 'zod';
import { createClient, defineApp, defineJob, migrate, runTick, type TickOptions } from '../src/index.js';
import { loadEnvConfig } from '../src/config.js';
import { openBenchServer } from './server.js';
import { median } from './stats.js';

const BenchNoop = defineJob({ type: 'bench.tick.noop', schema: z.object({ i: z.number().int() }) });
const app = defineApp({
  jobs: [BenchNoop],
  configure(worker) {
    worker.handle(BenchNoop, async () => null);
  },
});

/** A pool whose query() counts its calls: each is one round trip. */
function countingPool(connectionString: string): { pool: pg.Pool; count: () => number; reset: () => void } {
  const pool = new pg.Pool({ connectionString, max: 2 });
  pool.on('error', () => undefined);
  let n = 0;
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    n++;
    return query(...args);
  };
  return { pool, count: () => n, reset: () => (n = 0) };
}

const tickBase = (namespace: string): Omit<TickOptions, 'deadline'> => ({
  app,
  namespace,
  // Schedules are not part of the measurement (sys.retention is synced once, then not written).
  scheduleNamespaces: ['sys'],
  log: () => undefined,
});

/**
 * An empty tick (nothing ready, no slot due) on a warm pool: the median wall
 * time of 20 ticks, and the round trips one tick makes from register to
 * deregister. `coldWallMs` includes opening the connection, as on Lambda.
 */
export async function measureEmptyTick(
  connectionString: string,
): Promise<{ wallMs: number; roundTrips: number; coldWallMs: number }> {
  await migrate({ connectionString });
  const namespace = `bench-tick-${randomBytes(3).toString('hex')}`;
  const { pool, count, reset } = countingPool(connectionString);
  try {
    const tick = () => runTick({ ...tickBase(namespace), pool, deadline: new Date(Date.now() + 30_000) });
    await tick(); // stores the built-in slot and warms the connections
    const walls: number[] = [];
    const trips: number[] = [];
    for (let i = 0; i < 20; i++) {
      reset();
      const t0 = performance.now();
      await tick();
      walls.push(performance.now() - t0);
      trips.push(count());
    }
    const cold: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      await runTick({ ...tickBase(namespace), connectionString, deadline: new Date(Date.now() + 30_000) });
      cold.push(performance.now() - t0);
    }
    return { wallMs: round(median(walls)), roundTrips: Math.max(...trips), coldWallMs: round(median(cold)) };
  } finally {
    await pool.end();
  }
}

/** One tick (concurrency 100, a 5-minute budget) draining `n` no-op jobs. */
export async function measureTickDrain(connectionString: string, n: number): Promise<{ jobsPerSec: number }> {
  await migrate({ connectionString });
  const namespace = `bench-drain-${randomBytes(3).toString('hex')}`;
  const client = createClient({ connectionString, namespace, jobs: [BenchNoop] });
  try {
    for (let i = 0; i < n; i += 5000) {
      const batch = Array.from({ length: Math.min(5000, n - i) }, (_, k) => ({ job: BenchNoop, payload: { i: i + k } }));
      await client.enqueueMany(batch);
    }
    const t0 = performance.now();
    const s = await runTick({ ...tickBase(namespace), connectionString, concurrency: 100, deadline: new Date(Date.now() + 300_000) });
    const secs = (performance.now() - t0) / 1000;
    return { jobsPerSec: Math.round(s.succeeded / secs) };
  } finally {
    await client.close();
  }
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}

async function main(): Promise<void> {
  const db = await openBenchServer(loadEnvConfig());
  try {
    const empty = await measureEmptyTick(db.connectionString);
    console.log(
      `empty tick: ${empty.wallMs} ms on a warm pool (${empty.coldWallMs} ms opening its connection), ${empty.roundTrips} SQL round trips from register to deregister`,
    );
    const drain = await measureTickDrain(db.connectionString, 1000);
    console.log(`one tick drains 1,000 no-op jobs at ${drain.jobsPerSec} jobs/s`);
  } finally {
    await db.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
}

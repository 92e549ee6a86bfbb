// Scale (workhorse only): claim latency with 1,000 and with 1,000,000 ready
// jobs in the table (the ready partial index should keep it flat), then all
// of them run through the worker's own protocol calls (claim_many_v1 and
// complete_many_v1 in batches, without the Worker class, to keep the
// default run short), retention prunes them in bounded batches, and the
// hot tables' heap and index sizes are read after the run, after
// retention, and after a plain VACUUM. Finally claim latency is taken once
// more with 1,000 fresh jobs on the churned table.
//
// Claimed rows leave dead entries at the head of the ready index until
// VACUUM removes them, and every claim steps over them. The phase shows
// that cost once (claim latency after the first 100,000 jobs with no
// vacuum, then right after one) and afterwards runs a plain VACUUM every
// 100,000 jobs, standing in for autovacuum, which on a shared server may
// not reach the table in time.
import pg from 'pg';
import * as protocol from '../../src/db/protocol.js';
import { retentionBatch } from '../../src/db/protocol.js';
import { insertReadyJobs, vacuumWorkhorse, workhorseSizes, type RelationSize } from '../benchSql.js';
import { percentiles, type Percentiles } from '../stats.js';
import { NOOP, QUEUE } from '../systems/system.js';
import { withDatabase, type PhaseContext } from './context.js';

const NS = 'default';
const CLAIM_BATCH = 10;
const CLAIM_SAMPLES = 50;
const RUN_BATCH = 500;
const RUN_LOOPS = 2;
const RETENTION_BATCH = 10_000;
const LEASE_MS = 180_000;
const VACUUM_EVERY = 100_000;

export interface ScaleResult {
  readyJobs: number;
  claimAt1k: Percentiles;
  claimAtScale: Percentiles;
  claimAfterChurn: Percentiles;
  /** After VACUUM_EVERY jobs ran with no vacuum: the dead head of the ready index. */
  claimUnvacuumed: Percentiles;
  /** Right after a VACUUM of that state. */
  claimVacuumed: Percentiles;
  unvacuumedJobs: number;
  runJobsPerSec: number;
  retentionMs: number;
  retentionDeleted: number;
  sizesAfterRun: RelationSize[];
  sizesAfterRetention: RelationSize[];
  sizesAfterVacuum: RelationSize[];
}

function claimRequest(workerId: string, limit: number): protocol.ClaimRequest {
  return { workerId, queues: [QUEUE], types: [NOOP], limit, leaseMs: LEASE_MS };
}

/** Times CLAIM_SAMPLES claims of CLAIM_BATCH jobs; each batch is completed (untimed). */
async function claimLatency(db: pg.Pool, workerId: string): Promise<Percentiles> {
  const ms: number[] = [];
  for (let i = 0; i < CLAIM_SAMPLES; i++) {
    const t = performance.now();
    const jobs = await protocol.claimMany(db, NS, claimRequest(workerId, CLAIM_BATCH));
    ms.push(performance.now() - t);
    await protocol.completeMany(db, NS, jobs.map((j) => ({ id: j.id, execution: j.execution, resultJson: 'null' })));
  }
  return percentiles(ms);
}

/** Runs up to `limit` jobs through claim/complete on RUN_LOOPS connections; VACUUMs every VACUUM_EVERY when asked. */
async function runJobs(db: pg.Pool, workerId: string, limit: number, vacuum: boolean): Promise<number> {
  let done = 0;
  let nextVacuum = VACUUM_EVERY;
  let vacuuming: Promise<void> = Promise.resolve();
  await Promise.all(
    Array.from({ length: RUN_LOOPS }, async () => {
      while (done < limit) {
        const jobs = await protocol.claimMany(db, NS, claimRequest(workerId, Math.min(RUN_BATCH, limit - done)));
        if (jobs.length === 0) return;
        const ok = await protocol.completeMany(db, NS, jobs.map((j) => ({ id: j.id, execution: j.execution, resultJson: 'null' })));
        done += ok.size;
        if (vacuum && done >= nextVacuum) {
          nextVacuum += VACUUM_EVERY;
          vacuuming = vacuuming.then(() => vacuumWorkhorse(db));
        }
      }
    }),
  );
  await vacuuming;
  return done;
}

export function measureScale(ctx: PhaseContext): Promise<ScaleResult> {
  const total = ctx.flags['scale-jobs'];
  return withDatabase(ctx, 'workhorse', async (bdb) => {
    const db = new pg.Pool({ connectionString: bdb.url, max: RUN_LOOPS + 1 });
    db.on('error', () => undefined); // dropping the database ends its idle connections
    try {
      const workerId = `bench-scale-${process.pid}`;
      await protocol.registerWorker(db, NS, {
        workerId,
        build: 'bench',
        kind: 'process',
        queues: [QUEUE],
        types: [NOOP],
        concurrency: RUN_BATCH,
        heartbeatMs: LEASE_MS / 4,
      });
      await insertReadyJobs(db, NS, QUEUE, NOOP, 1_000);
      const claimAt1k = await claimLatency(db, workerId);
      ctx.log(`  scale: inserting ${total.toLocaleString('en-US')} ready jobs`);
      await insertReadyJobs(db, NS, QUEUE, NOOP, total - 1_000 + CLAIM_BATCH * CLAIM_SAMPLES);
      const claimAtScale = await claimLatency(db, workerId);
      ctx.log(`  scale: running them all`);
      let t = performance.now();
      const unvacuumedJobs = Math.min(VACUUM_EVERY, Math.floor(total / 2));
      const ran = await runJobs(db, workerId, unvacuumedJobs, false);
      const runMs = performance.now() - t;
      const claimUnvacuumed = await claimLatency(db, workerId);
      await vacuumWorkhorse(db);
      const claimVacuumed = await claimLatency(db, workerId);
      t = performance.now();
      const rest = await runJobs(db, workerId, Number.MAX_SAFE_INTEGER, true);
      const runJobsPerSec = ((ran + rest) / (runMs + performance.now() - t)) * 1000;
      const sizesAfterRun = await workhorseSizes(db);
      ctx.log(`  scale: retention`);
      t = performance.now();
      let retentionDeleted = 0;
      for (;;) {
        const r = await retentionBatch(db, NS, 0, RETENTION_BATCH);
        retentionDeleted += r.jobs;
        if (r.jobs === 0) break;
      }
      const retentionMs = performance.now() - t;
      const sizesAfterRetention = await workhorseSizes(db);
      await vacuumWorkhorse(db);
      const sizesAfterVacuum = await workhorseSizes(db);
      await insertReadyJobs(db, NS, QUEUE, NOOP, 1_000);
      const claimAfterChurn = await claimLatency(db, workerId);
      await protocol.deregisterWorker(db, NS, workerId, []);
      return {
        readyJobs: total,
        claimAt1k,
        claimAtScale,
        claimAfterChurn,
        claimUnvacuumed,
        claimVacuumed,
        unvacuumedJobs,
        runJobsPerSec,
        retentionMs,
        retentionDeleted,
        sizesAfterRun,
        sizesAfterRetention,
        sizesAfterVacuum,
      };
    } finally {
      await db.end();
    }
  });
}

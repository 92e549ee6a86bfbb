// Scenario 7: a poison job (it SIGKILLs its worker) claimed beside healthy
// prefetched jobs. A crash counts an attempt only against jobs whose handler
// had started: the healthy ones, never started, come back with their
// attempts intact and succeed once; the poison job still ends `failed`
// after its attempts, never in a crash loop.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/client.js';
import { migrate } from '../../src/db/migrate.js';
import { startOwnCluster, type OwnCluster } from '../../certify/ownCluster.js';
import { onServer, withDatabase } from '../../certify/run.js';
import { faultJobs } from '../fixtures/faultJobs.js';
import { killAll, spawnWorker, type SpawnedWorker } from '../fixtures/spawnWorker.js';

let cluster: OwnCluster;
const spawned: SpawnedWorker[] = [];

beforeAll(async () => {
  cluster = await startOwnCluster();
});
afterAll(async () => {
  killAll(spawned);
  await cluster?.destroy();
});

async function freshDatabase(): Promise<{ url: string; pool: pg.Pool }> {
  const name = `wh_poison_${randomBytes(4).toString('hex')}`;
  await onServer(cluster.url(), `create database ${name}`);
  const url = withDatabase(cluster.url(), name);
  await migrate({ connectionString: url });
  return { url, pool: new pg.Pool({ connectionString: url, max: 2 }) };
}

/**
 * Keeps one worker (concurrency 1, prefetch 5) running, starting a new one
 * whenever the last died, until every job has ended. Returns how many it started.
 */
async function superviseUntilDone(url: string, pool: pg.Pool, maxSpawns: number): Promise<number> {
  let spawns = 0;
  for (;;) {
    const open = await pool.query<{ n: number }>(`select count(*)::int as n from workhorse.jobs where status in ('ready', 'running')`);
    if (open.rows[0]!.n === 0) break;
    const live = spawned.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
    if (live.length === 0) {
      if (spawns >= maxSpawns) throw new Error(`still not done after ${spawns} workers: a crash loop`);
      spawns++;
      spawned.push(spawnWorker({ url, label: `poison-${spawns}`, heartbeatMs: 500, concurrency: 1, prefetch: 5 }, 'faultWorker.ts'));
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  for (const w of spawned) if (w.child.exitCode === null) w.child.kill('SIGTERM');
  await Promise.all(spawned.map((w) => w.exited));
  return spawns;
}

const noBackoff = { kind: 'fixed', baseMs: 0, maxMs: 0 } as const;

describe('a poison job beside healthy prefetched jobs', () => {
  it('costs the healthy ones no attempt, and ends failed after its own attempts', async () => {
    const { url, pool } = await freshDatabase();
    const client = createClient({ connectionString: url, jobs: faultJobs });
    try {
      const poison = await client.enqueue('fx.poison', {}, { priority: -1, maxAttempts: 2, backoff: noBackoff });
      const healthy = await client.enqueueMany(
        Array.from({ length: 5 }, () => ({ job: 'fx.healthy', payload: {}, options: { maxAttempts: 2, backoff: noBackoff } })),
      );
      const spawns = await superviseUntilDone(url, pool, 6);

      const p = (await client.getJob(poison.id))!;
      expect(p.status).toBe('failed');
      expect(p.attempt).toBe(2);
      for (const h of healthy) {
        const j = (await client.getJob(h.id))!;
        expect(j.status).toBe('succeeded');
        expect(j.attempt).toBe(1);
      }
      // Two workers died to the poison job; a third ran the rest.
      expect(spawns).toBe(3);
      const orphaned = await pool.query<{ n: number }>(
        `select count(*)::int as n from workhorse.job_attempts where outcome = 'orphaned' and job_id = any($1::bigint[])`,
        [healthy.map((h) => h.id)],
      );
      expect(orphaned.rows[0]!.n).toBe(10);
    } finally {
      await client.close();
      await pool.end();
    }
  }, 90_000);

  it('started from the buffer (unknown to the database as started), still ends failed within a bounded number of crashes', async () => {
    const { url, pool } = await freshDatabase();
    const client = createClient({ connectionString: url, jobs: faultJobs });
    try {
      const healthy = await client.enqueueMany(
        Array.from({ length: 3 }, () => ({ job: 'fx.healthy', payload: {}, options: { priority: 0, maxAttempts: 3, backoff: noBackoff } })),
      );
      const poison = await client.enqueue('fx.poison', {}, { priority: 1, maxAttempts: 1, backoff: noBackoff });
      // At most two crashes look unstarted (orphaned), then one counts: maxAttempts 1 ends it.
      const spawns = await superviseUntilDone(url, pool, 1 + 2 + 1 + 1);
      expect(spawns).toBeLessThanOrEqual(4);
      const p = (await client.getJob(poison.id))!;
      expect(p.status).toBe('failed');
      for (const h of healthy) expect((await client.getJob(h.id))!.status).toBe('succeeded');
    } finally {
      await client.close();
      await pool.end();
    }
  }, 90_000);
});

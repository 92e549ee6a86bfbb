// `npm run bench` is a benchmark, not a test, but it must keep working: a
// tiny run of the real command (child processes, real databases on the test
// server) returns complete JSON with every drain's per-job costs (CPU, WAL,
// commit records, B-tree entries, rows), the table renders its rounds and
// costs, says whether the server is durable, and without DATABASE_URL the
// bench runs on an embedded server with durable settings.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { DrainResult } from '../../bench/phases/drain.js';
import type { BenchResults } from '../../bench/results.js';
import { medianDrain } from '../../bench/drainMedian.js';
import { median, medianRound } from '../../bench/stats.js';
import { renderTable } from '../../bench/table.js';
import { serverUrl } from '../helpers/db.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function runBench(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/main.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: serverUrl(), ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const COST_ROWS = [
  '  PostgreSQL CPU per job (us)',
  '  WAL bytes per job, server-wide',
  '  WAL bytes per job, this database',
  '    of which full-page images',
  '  commit records per job',
  '  B-tree entries per job',
  '  rows written per job',
  '    of which HOT updates',
  '  index entries read per job',
  '    live rows fetched through them',
];

/** Every per-job cost of a drain is a number, and the figures agree with each other. */
function expectCosts(d: DrainResult, what: string): void {
  expect(d.databaseWalNote, what).toBeUndefined();
  // /proc counts CPU in 10 ms ticks: a few hundred cheap jobs may read 0.
  expect(d.serverCpuUsPerJob, what).toBeGreaterThanOrEqual(0);
  // The database's WAL records are a part of the server's WAL in the same window.
  expect(d.databaseWalBytesPerJob, what).toBeGreaterThan(0);
  expect(d.serverWalBytesPerJob, what).toBeGreaterThanOrEqual(d.databaseWalBytesPerJob!);
  expect(d.fullPageImageBytesPerJob, what).toBeGreaterThanOrEqual(0);
  expect(d.fullPageImageBytesPerJob, what).toBeLessThanOrEqual(d.databaseWalBytesPerJob!);
  // Settling a job commits something and writes at least its row.
  expect(d.commitsPerJob, what).toBeGreaterThan(0);
  expect(d.indexEntriesPerJob, what).toBeGreaterThan(0);
  expect(d.rowsWrittenPerJob, what).toBeGreaterThanOrEqual(1);
  expect(d.hotUpdatesPerJob, what).toBeGreaterThanOrEqual(0);
  // Claiming a job reads at least its own index entry and fetches its row.
  expect(d.indexEntriesReadPerJob, what).toBeGreaterThanOrEqual(1);
  expect(d.indexRowsFetchedPerJob, what).toBeGreaterThanOrEqual(1);
  expect(d.costRounds, what).toHaveLength(d.rounds!.length);
  for (const c of d.costRounds!) {
    expect(c.tables.reduce((n, t) => n + t.inserts + t.updates + t.deletes, 0), what).toBeCloseTo(c.rowsWrittenPerJob, 9);
    // The by-relation breakdown adds up to the database's figures.
    expect(c.walByRelation!.reduce((n, x) => n + x.bytes, 0), what).toBeCloseTo(c.databaseWalBytesPerJob!, 6);
    expect(c.walByRelation!.reduce((n, x) => n + x.indexEntries, 0), what).toBeCloseTo(c.indexEntriesPerJob!, 6);
    expect(c.walByRelation!.map((x) => x.relation), what).toContain('(commit records)');
    // The by-index breakdown adds up to the totals.
    expect(c.indexReads.reduce((n, x) => n + x.entriesRead, 0), what).toBeCloseTo(c.indexEntriesReadPerJob, 9);
    expect(c.indexReads.reduce((n, x) => n + x.rowsFetched, 0), what).toBeCloseTo(c.indexRowsFetchedPerJob, 9);
  }
}

describe('bench statistics', () => {
  it('reports the median round with every round kept, in the order run', () => {
    const r = medianRound([{ jobsPerSec: 30 }, { jobsPerSec: 10 }, { jobsPerSec: 20 }, { jobsPerSec: 40 }]);
    expect(r.jobsPerSec).toBe(20);
    expect(r.rounds).toEqual([30, 10, 20, 40]);
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
  });

  it('reports the median round\'s rate and, for every per-job cost, the median of the rounds', () => {
    const round = (jobsPerSec: number, cost: number, wal: number | null): DrainResult => ({
      jobsPerSec,
      processes: 1,
      leftover: jobsPerSec === 30 ? 2 : 0,
      clientCpuUsPerJob: cost,
      serverCpuUsPerJob: cost,
      serverWalBytesPerJob: cost * 100,
      databaseWalBytesPerJob: wal,
      fullPageImageBytesPerJob: wal,
      commitsPerJob: wal,
      indexEntriesPerJob: wal,
      rowsWrittenPerJob: cost,
      hotUpdatesPerJob: 0,
      tables: [{ table: 'jobs', inserts: 0, updates: cost, hotUpdates: 0, deletes: 0 }],
      indexEntriesReadPerJob: cost * 2,
      indexRowsFetchedPerJob: cost,
      indexReads: [{ index: 'jobs_pkey', table: 'jobs', scans: cost, entriesRead: cost * 2, rowsFetched: cost }],
      walByRelation: wal === null ? null : [{ relation: 'jobs', bytes: wal * 10, fullPageImageBytes: 0, indexEntries: 0 }],
      ...(wal === null ? { databaseWalNote: 'WAL not readable: gone' } : {}),
    });
    // Rates 10 / 30 / 20: the median round is the third; its costs (5) are not the median costs (3).
    const d = medianDrain([round(10, 3, 1), round(30, 1, null), round(20, 5, 3)]);
    expect(d.jobsPerSec).toBe(20);
    expect(d.rounds).toEqual([10, 30, 20]);
    expect(d.leftover).toBe(2);
    expect([d.clientCpuUsPerJob, d.serverCpuUsPerJob, d.serverWalBytesPerJob, d.rowsWrittenPerJob]).toEqual([3, 3, 300, 3]);
    expect(d.tables).toEqual([{ table: 'jobs', inserts: 0, updates: 3, hotUpdates: 0, deletes: 0 }]);
    expect([d.indexEntriesReadPerJob, d.indexRowsFetchedPerJob]).toEqual([6, 3]);
    expect(d.indexReads).toEqual([{ index: 'jobs_pkey', table: 'jobs', scans: 3, entriesRead: 6, rowsFetched: 3 }]);
    // A round whose WAL could not be read is left out of that figure's median, and said so.
    expect(d.databaseWalBytesPerJob).toBe(2);
    expect(d.walByRelation).toEqual([{ relation: 'jobs', bytes: 20, fullPageImageBytes: 0, indexEntries: 0 }]);
    expect(d.databaseWalNote).toBe('1 of 3 rounds: WAL not readable: gone');
    expect(d.costRounds!.map((c) => c.clientCpuUsPerJob)).toEqual([3, 1, 5]);
  });
});

describe('npm run bench', () => {
  it('measures the tick and HTTP bundles: their size and the import time of each, and of the Secrets Manager client', async () => {
    const out = await runBench(['--systems', 'workhorse', '--phases', 'bundle', '--import-samples', '2', '--json']);
    expect(out.code, out.stderr).toBe(0);
    const r = JSON.parse(out.stdout) as BenchResults;
    expect(r.bundle!.entries.map((e) => e.entry)).toEqual(['tick', 'http']);
    for (const e of r.bundle!.entries) {
      expect(e.bytes).toBeGreaterThan(50_000);
      expect(e.importMs).toBeGreaterThan(0);
      expect(e.cpuMs).toBeGreaterThan(0);
    }
    expect(r.bundle!.sdkClients[0]).toMatchObject({ name: '@aws-sdk/client-secrets-manager', importMs: expect.any(Number) });
    expect(renderTable(r)).toMatch(/\n {2}tick +[\d,]+ bytes \(\d+ KiB\) {2}import [\d.]+ ms \(CPU [\d.]+ ms\)/);
  });

  it('drains every job in every round and prints complete JSON and a table with the rounds', { timeout: 300_000 }, async () => {
    const out = await runBench([
      '--jobs', '400', '--systems', 'workhorse,graphile', '--phases', 'drain,drain2,heldxmin,raw', '--rounds', '2', '--raw-batch', '100', '--json',
    ]);
    expect(out.code, out.stderr).toBe(0);
    const r = JSON.parse(out.stdout) as BenchResults;
    for (const s of ['workhorse', 'graphile'] as const) {
      for (const key of ['drain1', 'drain2', 'heldXmin'] as const) {
        const d = r.systems[s]![key]!;
        expect(d.rounds).toHaveLength(2);
        expect(d.rounds!.every((x) => x > 0)).toBe(true);
        expect(d.leftover).toBe(0);
        expectCosts(d, `${s} ${key}`);
      }
    }
    expect(r.raw!.rounds).toHaveLength(2);
    const table = renderTable(r);
    expect(table).toContain('the median of 2 rounds');
    expect(table).toMatch(/drain, 1 process \(jobs\/s\)\s+[\d,]+\s+[\d,]+\s+\d+\.\d\dx/);
    expect(table).toContain('raw ceiling');
    for (const row of COST_ROWS) expect(table.split(row).length - 1, row).toBe(3);
    expect(table).toMatch(/\n {2}WAL bytes per job, server-wide +[\d,]+ +[\d,]+ +\d+\.\d\dx\n/);
    expect(table).toMatch(/\n {2}rows written per job +[\d.]+ +[\d.]+ +\d+\.\d\dx\n/);
    expect(table).toMatch(/\n {2}drain, held xmin, workhorse: \w+ (ins|upd|del) /);
    expect(table).toMatch(/\n {2}drain, 2 processes, workhorse: .*jobs_ready_idx [\d.]+ scans, [\d.]+ read, [\d.]+ fetched/);
    expect(table).toContain('pg_walinspect');
    expect(table).toMatch(/\n {2}drain, 2 processes, graphile-worker: .*\(commit records\) \d+/);
  });

  it('says in the header whether the server is durable, and marks a run that is not as not for publication', async () => {
    const out = await runBench(['--jobs', '200', '--systems', 'workhorse', '--phases', 'drain', '--rounds', '1', '--json']);
    expect(out.code, out.stderr).toBe(0);
    const r = JSON.parse(out.stdout) as BenchResults;
    const d = r.machine.durability;
    expect(r.machine.server).toBe('DATABASE_URL');
    expect(d.durable).toBe(d.fsync === 'on' && d.synchronousCommit !== 'off' && d.fullPageWrites === 'on');
    const durable = renderTable({ ...r, machine: { ...r.machine, durability: { fsync: 'on', synchronousCommit: 'on', fullPageWrites: 'on', durable: true } } });
    expect(durable).toContain('server: DATABASE_URL; fsync on, synchronous_commit on, full_page_writes on (durable)');
    expect(durable).not.toContain('NOT FOR PUBLICATION');
    expect(durable).not.toContain('autovacuum');
    expect(d.autovacuum).toMatch(/^(on|off)$/);
    const unvacuumed = renderTable({ ...r, machine: { ...r.machine, durability: { ...r.machine.durability, autovacuum: 'off' } } });
    expect(unvacuumed).toContain('autovacuum off: dead rows stay until a VACUUM');
    const fast = renderTable({ ...r, machine: { ...r.machine, durability: { fsync: 'on', synchronousCommit: 'off', fullPageWrites: 'on', durable: false } } });
    expect(fast.split('\n').slice(0, 5).join('\n')).toContain('NOT DURABLE, NOT FOR PUBLICATION');
    expect(fast.trimEnd().split('\n').at(-1)).toContain('NOT DURABLE, NOT FOR PUBLICATION (fsync on, synchronous_commit off, full_page_writes on)');
  });

  it('without DATABASE_URL, runs on the embedded PostgreSQL with fsync, synchronous_commit and full_page_writes on', { timeout: 300_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'wh-bench-pg-'));
    try {
      const out = await runBench(['--jobs', '200', '--systems', 'workhorse', '--phases', 'drain', '--rounds', '1', '--json'], {
        DATABASE_URL: '',
        WORKHORSE_DATA_DIR: dataDir,
      });
      expect(out.code, out.stderr).toBe(0);
      const r = JSON.parse(out.stdout) as BenchResults;
      expect(r.machine.server).toBe('embedded');
      expect(r.machine.durability).toEqual({ fsync: 'on', synchronousCommit: 'on', fullPageWrites: 'on', durable: true, autovacuum: 'on' });
      expectCosts(r.systems.workhorse!.drain1!, 'workhorse on the embedded server');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

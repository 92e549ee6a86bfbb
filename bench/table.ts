// Renders a benchmark run as one plain-text table: a row per measurement, a
// column per system, and the workhorse/peer ratios where they mean
// something. Missing measurements print as "-".
import type { SystemName } from './options.js';
import type { BenchResults, SystemResults } from './results.js';
import type { RelationSize } from './benchSql.js';
import type { BundleResult } from './phases/bundle.js';
import { wakeLines } from './phases/wake.js';
import { telemetryLines } from './phases/telemetry.js';
import { outboxLines } from './phases/outbox.js';
import { suspendLines } from './phases/suspend.js';
import type { DrainResult } from './phases/drain.js';
import { DRAINS, NOT_DURABLE, costLines, durabilityLines } from './costLines.js';
import { describeDurability } from './durability.js';
import { fmtPerJob } from './format.js';
import { medianRatio } from './stats.js';
import { DISPLAY_NAME } from './systems/registry.js';

const fmtInt = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? '-' : Math.round(n).toLocaleString('en-US'));
const fmtMs = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? '-' : n < 10 ? n.toFixed(2) : n.toFixed(1));
const fmtX = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? '-' : `${n.toFixed(2)}x`);
const mib = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MiB`;

function grid(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows
    .map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '))
    .join('\n');
}

type Metric = {
  label: string;
  get: (s: SystemResults) => number | undefined;
  fmt: (n: number | undefined) => string;
  higherIsBetter: boolean;
  /** For measurements taken in rounds: each round's value, so the ratio is the median of per-round ratios. */
  rounds?: (s: SystemResults) => number[] | undefined;
  /** A part of the row above it, where a ratio says nothing (more HOT updates are not worse). */
  noRatio?: boolean;
};

/** A drain's rate and, below it, what each job cost (each cost the median of its rounds). */
function drainMetrics(key: DrainKey, label: string): Metric[] {
  const cost = (row: string, pick: (d: DrainResult) => number | null, fmt: Metric['fmt'], ratio = true): Metric => ({
    label: row,
    get: (s) => {
      const d = s[key];
      return d ? (pick(d) ?? undefined) : undefined;
    },
    fmt,
    higherIsBetter: false,
    noRatio: !ratio,
  });
  return [
    { label: `${label} (jobs/s)`, get: (s) => s[key]?.jobsPerSec, fmt: fmtInt, higherIsBetter: true, rounds: (s) => s[key]?.rounds },
    cost('  worker CPU per job (us)', (d) => d.clientCpuUsPerJob, fmtInt),
    cost('  PostgreSQL CPU per job (us)', (d) => d.serverCpuUsPerJob, fmtInt),
    cost('  WAL bytes per job, server-wide', (d) => d.serverWalBytesPerJob, fmtInt),
    cost('  WAL bytes per job, this database', (d) => d.databaseWalBytesPerJob, fmtInt),
    cost('    of which full-page images', (d) => d.fullPageImageBytesPerJob, fmtInt, false),
    cost('  commit records per job', (d) => d.commitsPerJob, fmtPerJob),
    cost('  B-tree entries per job', (d) => d.indexEntriesPerJob, fmtPerJob),
    cost('  rows written per job', (d) => d.rowsWrittenPerJob, fmtPerJob),
    cost('    of which HOT updates', (d) => d.hotUpdatesPerJob, fmtPerJob, false),
    cost('  index entries read per job', (d) => d.indexEntriesReadPerJob, fmtPerJob),
    cost('    live rows fetched through them', (d) => d.indexRowsFetchedPerJob, fmtPerJob, false),
  ];
}

const METRICS: Metric[] = [
  ...drainMetrics('drain1', 'drain, 1 process'),
  ...drainMetrics('drain2', 'drain, 2 processes'),
  ...drainMetrics('heldXmin', 'drain, held xmin'),
  { label: 'enqueue, bulk (jobs/s)', get: (s) => s.enqueue?.bulkPerSec, fmt: fmtInt, higherIsBetter: true },
  { label: 'enqueue, one at a time (jobs/s)', get: (s) => s.enqueue?.singlePerSec, fmt: fmtInt, higherIsBetter: true },
  { label: 'enqueue-to-start p50 (ms)', get: (s) => s.latency?.p50, fmt: fmtMs, higherIsBetter: false },
  { label: 'enqueue-to-start p99 (ms)', get: (s) => s.latency?.p99, fmt: fmtMs, higherIsBetter: false },
];

function sizeLine(label: string, sizes: RelationSize[]): string {
  const total = sizes.reduce((a, s) => a + s.tableBytes + s.indexBytes, 0);
  const parts = sizes.map((s) => `${s.relation} ${mib(s.tableBytes)} + idx ${mib(s.indexBytes)}`).join(', ');
  return `  ${label.padEnd(22)} total ${mib(total)} (${parts})`;
}

type DrainKey = (typeof DRAINS)[number][0];

/** One line per drain measurement listing each system's rate per round and workhorse's ratio per round. */
function roundsLines(r: BenchResults, systems: SystemName[], peers: SystemName[]): string[] {
  if (r.flags.rounds < 2) return [];
  const lines: string[] = [];
  for (const [key, label] of DRAINS) {
    const per = systems.map((s) => [s, r.systems[s]![key]?.rounds] as const).filter(([, v]) => v !== undefined);
    if (per.length === 0) continue;
    const rates = per.map(([s, v]) => `${DISPLAY_NAME[s]} ${v!.map((x) => fmtInt(x)).join(' / ')}`);
    const wh = r.systems.workhorse?.[key]?.rounds;
    const ratios = wh
      ? peers.flatMap((p) => {
          const b = r.systems[p]![key]?.rounds;
          return b ? [`wh/${p === 'graphile' ? 'gw' : 'pgb'} ${wh.map((a, i) => fmtX(a / b[i]!)).join(' ')}`] : [];
        })
      : [];
    lines.push(`  ${label}: ${[...rates, ...ratios].join('; ')}`);
  }
  return lines;
}

const kib = (b: number) => `${fmtInt(b / 1024)} KiB`;

/** The bundle phase: minified size and import cost of each Lambda entry, then the lazily loaded SDK clients. */
function bundleLines(b: BundleResult): string[] {
  return [
    `bundles (minified, as the construct ships them; import timed inside a fresh node process, ` +
      `median of ${b.samples}, NODE_OPTIONS=${b.nodeOptions}):`,
    ...b.entries.map((e) => `  ${e.entry.padEnd(5)} ${fmtInt(e.bytes).padStart(9)} bytes (${kib(e.bytes)})  import ${fmtMs(e.importMs)} ms (CPU ${fmtMs(e.cpuMs)} ms)`),
    ...b.sdkClients.map(
      (c) => `  ${c.name} (runtime-provided, loaded on a cold start that reads secrets): import ${fmtMs(c.importMs)} ms (CPU ${fmtMs(c.cpuMs)} ms)`,
    ),
  ];
}

export function renderTable(r: BenchResults): string {
  const systems = (Object.keys(r.systems) as SystemName[]).filter((s) => r.systems[s]);
  const peers = systems.filter((s) => s !== 'workhorse');
  const wh = r.systems.workhorse;
  const out: string[] = [];
  const m = r.machine;
  out.push(
    `workhorse bench  ${m.date}  ${m.cpus} cores, ${m.memGiB} GiB  ${m.postgres}  node ${m.node}  ` +
      `load(1m) ${m.loadBefore.toFixed(2)} -> ${m.loadAfter.toFixed(2)}`,
  );
  out.push(
    `jobs ${r.flags.jobs.toLocaleString('en-US')}, concurrency ${r.flags.concurrency} per process, ` +
      `wall ${r.wallSeconds.toFixed(0)} s`,
  );
  out.push(...durabilityLines(m));
  const head = ['', ...systems.map((s) => DISPLAY_NAME[s]), ...(wh ? peers.map((p) => `wh/${p === 'graphile' ? 'gw' : 'pgb'}`) : [])];
  const rows: string[][] = [head];
  for (const metric of METRICS) {
    const values = systems.map((s) => metric.get(r.systems[s]!));
    if (values.every((v) => v === undefined)) continue;
    const ratios = wh
      ? peers.map((p) => {
          if (metric.noRatio) return undefined;
          const perRound = medianRatio(metric.rounds?.(wh), metric.rounds?.(r.systems[p]!));
          if (perRound !== undefined) return perRound;
          const a = metric.get(wh);
          const b = metric.get(r.systems[p]!);
          if (a === undefined || b === undefined || a === 0 || b === 0) return undefined;
          return metric.higherIsBetter ? a / b : b / a;
        })
      : [];
    rows.push([metric.label, ...values.map(metric.fmt), ...ratios.map(fmtX)]);
  }
  if (rows.length > 1) out.push('', grid(rows));
  const roundLines = roundsLines(r, systems, peers);
  if (roundLines.length) {
    out.push(
      '',
      `drain rates: the median of ${r.flags.rounds} rounds, the systems taking turns; the ratios: the median of the per-round ratios. Every round:`,
      ...roundLines,
    );
  }
  out.push(...costLines(r, systems));
  if (r.raw) {
    // The median over rounds of workhorse's one-process rate over that round's raw ceiling.
    const share = medianRatio(wh?.drain1?.rounds, r.raw.rounds) ?? (wh?.drain1 ? wh.drain1.jobsPerSec / r.raw.jobsPerSec : undefined);
    const pct = share === undefined ? '' : ` ; workhorse 1 process = ${(share * 100).toFixed(0)} % of it`;
    const cpu = r.raw.serverCpuUsPerJob === null ? '' : `, CPU per job ${fmtInt(r.raw.clientCpuUsPerJob)} us client + ${fmtInt(r.raw.serverCpuUsPerJob)} us PostgreSQL`;
    const each = r.raw.rounds && r.raw.rounds.length > 1 ? ` (median of ${r.raw.rounds.map((x) => fmtInt(x)).join(' / ')})` : '';
    out.push('', `raw ceiling (bare claim+complete SQL, batch ${r.raw.batch}, ${r.raw.loops} connections): ${fmtInt(r.raw.jobsPerSec)} jobs/s${each}${cpu}${pct}`);
  }
  if (r.tick) {
    out.push(
      r.tick.available
        ? `tick: empty tick ${fmtMs(r.tick.emptyWallMs)} ms in ${r.tick.emptyRoundTrips} round trips; a tick draining ${r.tick.drainJobs.toLocaleString('en-US')} jobs: ${fmtInt(r.tick.drainJobsPerSec)} jobs/s`
        : `tick: not measured (${r.tick.reason})`,
    );
  }
  if (r.scale) {
    const s = r.scale;
    out.push(
      `scale: claim of 10 with 1,000 ready p50 ${fmtMs(s.claimAt1k.p50)} ms (p99 ${fmtMs(s.claimAt1k.p99)}); ` +
        `with ${fmtInt(s.readyJobs)} ready p50 ${fmtMs(s.claimAtScale.p50)} ms (p99 ${fmtMs(s.claimAtScale.p99)}); ` +
        `after the churn p50 ${fmtMs(s.claimAfterChurn.p50)} ms`,
    );
    out.push(
      `  after ${fmtInt(s.unvacuumedJobs)} jobs ran with no VACUUM p50 ${fmtMs(s.claimUnvacuumed.p50)} ms; ` +
        `right after a VACUUM p50 ${fmtMs(s.claimVacuumed.p50)} ms (afterwards a VACUUM every 100,000 jobs)`,
    );
    out.push(
      `  ran ${fmtInt(s.readyJobs)} jobs through claim/complete at ${fmtInt(s.runJobsPerSec)} jobs/s; ` +
        `retention pruned ${fmtInt(s.retentionDeleted)} in ${(s.retentionMs / 1000).toFixed(1)} s`,
    );
    out.push(sizeLine('after the run', s.sizesAfterRun));
    out.push(sizeLine('after retention', s.sizesAfterRetention));
    out.push(sizeLine('after VACUUM', s.sizesAfterVacuum));
  }
  if (r.wake) out.push(...wakeLines(r.wake));
  if (r.telemetry) out.push(...telemetryLines(r.telemetry));
  if (r.outbox) out.push(...outboxLines(r.outbox));
  if (r.suspend) out.push(...suspendLines(r.suspend));
  if (r.bundle) out.push(...bundleLines(r.bundle));
  const configs = systems.map((s) => `  ${DISPLAY_NAME[s]}: ${r.systems[s]!.config}`);
  if (configs.length) out.push('', 'configuration:', ...configs);
  const leftovers = systems.flatMap((s) =>
    (['drain1', 'drain2', 'heldXmin'] as const)
      .filter((k) => (r.systems[s]![k]?.leftover ?? 0) > 0)
      .map((k) => `${DISPLAY_NAME[s]} ${k}: ${r.systems[s]![k]!.leftover} jobs left unsettled`),
  );
  if (leftovers.length) out.push('', 'WARNING:', ...leftovers.map((l) => `  ${l}`));
  if (!m.durability.durable) out.push('', `${NOT_DURABLE} (${describeDurability(m.durability)})`);
  return out.join('\n');
}

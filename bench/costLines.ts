// The parts of the benchmark's table that say what a job cost PostgreSQL
// and how much to trust it: the server's durability settings (a run
// without them is marked as not for publication), where each job's rows
// and WAL went, table by table and index by index, and how each per-job
// figure is measured.
import { autovacuumNote, describeDurability } from './durability.js';
import { fmtPerJob } from './format.js';
import type { SystemName } from './options.js';
import type { BenchResults, MachineInfo } from './results.js';
import type { IndexReads } from './indexReads.js';
import type { TableWrites } from './rowsWritten.js';
import type { RelationWal } from './walBytes.js';
import { DISPLAY_NAME } from './systems/registry.js';

export const DRAINS = [
  ['drain1', 'drain, 1 process'],
  ['drain2', 'drain, 2 processes'],
  ['heldXmin', 'drain, held xmin'],
] as const;

export const NOT_DURABLE = 'NOT DURABLE, NOT FOR PUBLICATION';

/** The server line of the header, a warning when commits are not durable, and a note when the server does not autovacuum. */
export function durabilityLines(m: MachineInfo): string[] {
  const d = m.durability;
  const server = m.server === 'embedded' ? 'embedded PostgreSQL (no DATABASE_URL)' : 'DATABASE_URL';
  const line = `server: ${server}; ${describeDurability(d)}`;
  const vacuum = autovacuumNote(d);
  const extra = vacuum ? [vacuum] : [];
  if (d.durable) return [`${line} (durable)`, ...extra];
  return [
    line,
    `${NOT_DURABLE}: with fsync, synchronous_commit or full_page_writes off every commit is cheaper than on a ` +
      'production server; these rates, costs and ratios flatter every system and must not be published',
    ...extra,
  ];
}

/** `jobs ins 1.00, upd 2.00 (HOT 1.00); job_runtime ins 1.00, del 1.00` */
function tablesLine(tables: TableWrites[]): string {
  if (tables.length === 0) return 'no rows';
  return tables
    .map((t) => {
      const parts = [
        t.inserts ? `ins ${fmtPerJob(t.inserts)}` : '',
        t.updates ? `upd ${fmtPerJob(t.updates)}${t.hotUpdates ? ` (HOT ${fmtPerJob(t.hotUpdates)})` : ''}` : '',
        t.deletes ? `del ${fmtPerJob(t.deletes)}` : '',
      ].filter(Boolean);
      return `${t.table} ${parts.join(', ')}`;
    })
    .join('; ');
}

/** `jobs_ready_idx 0.41 scans, 3.70 read, 2.65 fetched; ...`; indexes under 0.005 entries and scans a job left out. */
function readsLine(reads: IndexReads[]): string {
  const shown = reads.filter((x) => x.entriesRead >= 0.005 || x.scans >= 0.005);
  if (shown.length === 0) return 'no index reads';
  return shown
    .map((x) => `${x.index} ${fmtPerJob(x.scans)} scans, ${fmtPerJob(x.entriesRead)} read, ${fmtPerJob(x.rowsFetched)} fetched`)
    .join('; ');
}

const bytes = (n: number) => (n < 10 ? n.toFixed(1) : Math.round(n).toLocaleString('en-US'));

/** `jobs 420 (FPI 31); jobs_pkey 95, 2.00 entries; (commit records) 1.2`; relations under 0.05 bytes a job left out. */
function relationsLine(relations: RelationWal[]): string {
  const shown = relations.filter((x) => x.bytes >= 0.05);
  if (shown.length === 0) return 'no WAL';
  return shown
    .map((x) => {
      const fpi = x.fullPageImageBytes >= 0.5 ? ` (FPI ${bytes(x.fullPageImageBytes)})` : '';
      const entries = x.indexEntries ? `, ${fmtPerJob(x.indexEntries)} entries` : '';
      return `${x.relation} ${bytes(x.bytes)}${fpi}${entries}`;
    })
    .join('; ');
}

const HOW_MEASURED = [
  'per-job costs: each the median of its rounds; a cost ratio is the peer\'s figure over workhorse\'s (above 1: workhorse spends less).',
  'Each is taken around one drain, from after the fill until the workers have stopped and their backends have exited:',
  '  PostgreSQL CPU     utime + stime of the database\'s backends (/proc), from before the workers start to the N-th handler start',
  '  WAL, server-wide   pg_wal_lsn_diff of pg_current_wal_lsn() after and before: every database on the server counts, other work too',
  '  WAL, this database the same WAL read back with pg_walinspect: records on this database\'s blocks, plus the commit records of the',
  '                     transactions that wrote them; full-page images, commit records and B-tree entries (leaf and posting-list',
  '                     inserts, leaf splits) counted in the same records; by relation: the one the record\'s first block belongs to;',
  '                     UNLOGGED tables write no WAL and are not in these',
  '  rows written       inserts + updates + deletes in pg_stat_user_tables of the system\'s schema; HOT updates are among the updates',
  '  index entries read idx_tup_read in pg_stat_user_indexes of the system\'s schema: entries the scans returned, dead rows\' too;',
  '                     live rows fetched: idx_tup_fetch (a claim that walks past leased or settled rows reads more of both)',
];

/** Rows and WAL per job by table and relation for every drain and system, the notes on unreadable WAL, and how each figure is measured. */
export function costLines(r: BenchResults, systems: SystemName[]): string[] {
  const byTable: string[] = [];
  const byRelation: string[] = [];
  const byIndex: string[] = [];
  const notes: string[] = [];
  for (const [key, label] of DRAINS) {
    for (const s of systems) {
      const d = r.systems[s]![key];
      if (!d) continue;
      byTable.push(`  ${label}, ${DISPLAY_NAME[s]}: ${tablesLine(d.tables)}`);
      if (d.indexReads) byIndex.push(`  ${label}, ${DISPLAY_NAME[s]}: ${readsLine(d.indexReads)}`);
      if (d.walByRelation) byRelation.push(`  ${label}, ${DISPLAY_NAME[s]}: ${relationsLine(d.walByRelation)}`);
      if (d.databaseWalNote) notes.push(`  ${label}, ${DISPLAY_NAME[s]}: WAL of this database not measured in ${d.databaseWalNote}`);
    }
  }
  if (byTable.length === 0) return [];
  return [
    '',
    'rows written per job, by table (median of the rounds):',
    ...byTable,
    ...(byRelation.length
      ? ['', 'WAL bytes per job of this database, by relation, with the B-tree entries inserted per job (median of the rounds):', ...byRelation]
      : []),
    ...(byIndex.length
      ? ['', 'index reads per job, by index: scans started, entries read, live rows fetched (median of the rounds):', ...byIndex]
      : []),
    ...(notes.length ? ['', 'notes:', ...notes] : []),
    '',
    ...HOW_MEASURED,
  ];
}

// The reported result of a drain measured in rounds: the rate is the median
// round's (the same round whose rate the table shows and whose per-round
// ratios it takes), and every per-job cost (CPU, WAL, commits, index
// entries, rows) is the median of that figure over the rounds, so one noisy
// round moves none of them. Every round's rate and costs are kept.
import type { DrainCost, DrainResult } from './phases/drain.js';
import { median, medianRound } from './stats.js';
import type { IndexReads } from './indexReads.js';
import type { TableWrites } from './rowsWritten.js';
import type { RelationWal } from './walBytes.js';

/** The median of the rounds that have the figure; null when none has it. */
function medianOf(values: (number | null)[]): number | null {
  const known = values.filter((v): v is number => v !== null);
  return known.length ? median(known) : null;
}

/**
 * Per named row (a table, a relation), the median of each field over the
 * rounds; a row missing from a round counts 0 there.
 */
function medianRows<T>(rounds: T[][], name: (t: T) => string, make: (name: string, of: (pick: (t: T) => number) => number) => T): T[] {
  const names = [...new Set(rounds.flatMap((r) => r.map(name)))].sort();
  return names.map((n) =>
    make(n, (pick) =>
      median(
        rounds.map((r) => {
          const row = r.find((t) => name(t) === n);
          return row ? pick(row) : 0;
        }),
      ),
    ),
  );
}

function medianTables(rounds: DrainCost[]): TableWrites[] {
  return medianRows(
    rounds.map((r) => r.tables),
    (t) => t.table,
    (table, of) => ({ table, inserts: of((t) => t.inserts), updates: of((t) => t.updates), hotUpdates: of((t) => t.hotUpdates), deletes: of((t) => t.deletes) }),
  );
}

/** Most entries read first. */
function medianIndexReads(rounds: DrainCost[]): IndexReads[] {
  const tableOf = new Map(rounds.flatMap((r) => r.indexReads.map((x) => [x.index, x.table] as const)));
  return medianRows(
    rounds.map((r) => r.indexReads),
    (x) => x.index,
    (index, of) => ({ index, table: tableOf.get(index)!, scans: of((x) => x.scans), entriesRead: of((x) => x.entriesRead), rowsFetched: of((x) => x.rowsFetched) }),
  ).sort((x, y) => y.entriesRead - x.entriesRead);
}

/** Over the rounds whose WAL was read; largest first. */
function medianWalByRelation(rounds: DrainCost[]): RelationWal[] | null {
  const read = rounds.flatMap((r) => (r.walByRelation ? [r.walByRelation] : []));
  if (read.length === 0) return null;
  return medianRows(
    read,
    (x) => x.relation,
    (relation, of) => ({
      relation,
      bytes: of((x) => x.bytes),
      fullPageImageBytes: of((x) => x.fullPageImageBytes),
      indexEntries: of((x) => x.indexEntries),
    }),
  ).sort((x, y) => y.bytes - x.bytes);
}

function costOf(r: DrainResult): DrainCost {
  const { jobsPerSec: _rate, processes: _p, leftover: _l, rounds: _r, costRounds: _c, ...cost } = r;
  return cost;
}

export function medianDrain(rounds: DrainResult[]): DrainResult {
  const costRounds = rounds.map(costOf);
  const of = (pick: (c: DrainCost) => number) => median(costRounds.map(pick));
  const ofKnown = (pick: (c: DrainCost) => number | null) => medianOf(costRounds.map(pick));
  const notes = [...new Set(costRounds.flatMap((c) => (c.databaseWalNote ? [c.databaseWalNote] : [])))];
  const unreadable = costRounds.filter((c) => c.databaseWalNote).length;
  const { databaseWalNote: _note, ...picked } = medianRound(rounds);
  return {
    ...picked,
    // Any round's unsettled jobs are reported, not only the median round's.
    leftover: Math.max(...rounds.map((r) => r.leftover)),
    clientCpuUsPerJob: of((c) => c.clientCpuUsPerJob),
    serverCpuUsPerJob: ofKnown((c) => c.serverCpuUsPerJob),
    serverWalBytesPerJob: of((c) => c.serverWalBytesPerJob),
    databaseWalBytesPerJob: ofKnown((c) => c.databaseWalBytesPerJob),
    fullPageImageBytesPerJob: ofKnown((c) => c.fullPageImageBytesPerJob),
    commitsPerJob: ofKnown((c) => c.commitsPerJob),
    indexEntriesPerJob: ofKnown((c) => c.indexEntriesPerJob),
    rowsWrittenPerJob: of((c) => c.rowsWrittenPerJob),
    hotUpdatesPerJob: of((c) => c.hotUpdatesPerJob),
    tables: medianTables(costRounds),
    indexEntriesReadPerJob: of((c) => c.indexEntriesReadPerJob),
    indexRowsFetchedPerJob: of((c) => c.indexRowsFetchedPerJob),
    indexReads: medianIndexReads(costRounds),
    walByRelation: medianWalByRelation(costRounds),
    costRounds,
    ...(notes.length ? { databaseWalNote: `${unreadable} of ${rounds.length} rounds: ${notes.join('; ')}` } : {}),
  };
}

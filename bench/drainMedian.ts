// The reported result of a drain measured in rounds: the rate is the median
// round's (the same round whose rate the table shows and whose per-round
// ratios it takes), and every per-job cost (CPU, WAL, commits, index
// entries, rows) is the median of that figure over the rounds, so one noisy
// round moves none of them. Every round's rate and costs are kept.
import type { DrainCost, DrainResult } from './phases/drain.js';
import { median, medianRound } from './stats.js';
import type { TableWrites } from './rowsWritten.js';

/** The median of the rounds that have the figure; null when none has it. */
function medianOf(values: (number | null)[]): number | null {
  const known = values.filter((v): v is number => v !== null);
  return known.length ? median(known) : null;
}

/** Per table, the median of each counter over the rounds (a table a round did not write counts 0 there). */
function medianTables(rounds: DrainCost[]): TableWrites[] {
  const names = [...new Set(rounds.flatMap((r) => r.tables.map((t) => t.table)))].sort();
  return names.map((table) => {
    const of = (pick: (t: TableWrites) => number) => median(rounds.map((r) => pick(r.tables.find((t) => t.table === table) ?? zero(table))));
    return { table, inserts: of((t) => t.inserts), updates: of((t) => t.updates), hotUpdates: of((t) => t.hotUpdates), deletes: of((t) => t.deletes) };
  });
}

const zero = (table: string): TableWrites => ({ table, inserts: 0, updates: 0, hotUpdates: 0, deletes: 0 });

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
    costRounds,
    ...(notes.length ? { databaseWalNote: `${unreadable} of ${rounds.length} rounds: ${notes.join('; ')}` } : {}),
  };
}

// What a system's statements read through its indexes, from PostgreSQL's
// cumulative index statistics (pg_stat_user_indexes of the system's
// schema): scans started, index entries returned, and live table rows
// fetched through them. The claim's walk of the ready set shows here: an
// entry of a job another worker has leased, or of a settled row whose
// old version is still indexed, is read (and its row fetched and checked)
// and skipped. Counted by every backend, published like the table
// counters (rowsWritten.ts), so read after the backends have gone.
import pg from 'pg';

export interface IndexReads {
  index: string;
  table: string;
  /** Index scans started (a probe of one key is one scan). */
  scans: number;
  /** Index entries the scans returned, whether their row turned out live or not. */
  entriesRead: number;
  /** Live table rows fetched through those entries by plain index scans. */
  rowsFetched: number;
}

export async function readIndexReads(c: pg.Client, schema: string): Promise<IndexReads[]> {
  const r = await c.query<{ indexrelname: string; relname: string; scans: string; tup_read: string; tup_fetch: string }>(
    `select indexrelname, relname, idx_scan as scans, idx_tup_read as tup_read, idx_tup_fetch as tup_fetch
       from pg_stat_user_indexes
      where schemaname = $1
      order by indexrelname`,
    [schema],
  );
  return r.rows.map((x) => ({
    index: x.indexrelname,
    table: x.relname,
    scans: Number(x.scans),
    entriesRead: Number(x.tup_read),
    rowsFetched: Number(x.tup_fetch),
  }));
}

/** What each index gained between two readings (indexes created meanwhile start at 0); unread indexes are left out. */
export function readsBetween(before: IndexReads[], after: IndexReads[]): IndexReads[] {
  const start = new Map(before.map((x) => [x.index, x]));
  return after
    .map((x) => {
      const b = start.get(x.index);
      return {
        index: x.index,
        table: x.table,
        scans: x.scans - (b?.scans ?? 0),
        entriesRead: x.entriesRead - (b?.entriesRead ?? 0),
        rowsFetched: x.rowsFetched - (b?.rowsFetched ?? 0),
      };
    })
    .filter((x) => x.scans || x.entriesRead);
}

export const entriesRead = (xs: IndexReads[]) => xs.reduce((n, x) => n + x.entriesRead, 0);
export const rowsFetched = (xs: IndexReads[]) => xs.reduce((n, x) => n + x.rowsFetched, 0);

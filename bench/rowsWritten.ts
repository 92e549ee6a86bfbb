// Rows a system wrote, from PostgreSQL's cumulative table statistics
// (pg_stat_user_tables of the system's schema): inserts, updates (HOT ones
// among them) and deletes, counted by every backend whether its transaction
// committed or not. A backend publishes its counters at transaction end at
// most once a second and always when it exits, before it leaves
// pg_stat_activity; the caller reads them once the backends that did the
// work have gone (see writeCost.ts).
import pg from 'pg';

export interface TableWrites {
  table: string;
  inserts: number;
  /** Every update, HOT or not. */
  updates: number;
  /** Updates that changed no indexed column and fit on the same page: no new index entries. */
  hotUpdates: number;
  deletes: number;
}

export async function readTableWrites(c: pg.Client, schema: string): Promise<TableWrites[]> {
  const r = await c.query<{ relname: string; ins: string; upd: string; hot: string; del: string }>(
    `select relname, n_tup_ins as ins, n_tup_upd as upd, n_tup_hot_upd as hot, n_tup_del as del
       from pg_stat_user_tables
      where schemaname = $1
      order by relname`,
    [schema],
  );
  return r.rows.map((x) => ({
    table: x.relname,
    inserts: Number(x.ins),
    updates: Number(x.upd),
    hotUpdates: Number(x.hot),
    deletes: Number(x.del),
  }));
}

/** What each table gained between two readings (tables created meanwhile start at 0); untouched tables are left out. */
export function writesBetween(before: TableWrites[], after: TableWrites[]): TableWrites[] {
  const start = new Map(before.map((t) => [t.table, t]));
  return after
    .map((t) => {
      const b = start.get(t.table);
      return {
        table: t.table,
        inserts: t.inserts - (b?.inserts ?? 0),
        updates: t.updates - (b?.updates ?? 0),
        hotUpdates: t.hotUpdates - (b?.hotUpdates ?? 0),
        deletes: t.deletes - (b?.deletes ?? 0),
      };
    })
    .filter((t) => t.inserts || t.updates || t.deletes);
}

/** Rows written: inserts + updates + deletes (HOT updates are part of the updates, not added again). */
export function rowsWritten(tables: TableWrites[]): number {
  return tables.reduce((n, t) => n + t.inserts + t.updates + t.deletes, 0);
}

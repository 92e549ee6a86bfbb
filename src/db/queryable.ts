// The one shape of "something that runs a query": a pg Pool, PoolClient or
// Client, the worker's GuardedDb, or a caller's open transaction. Rows come
// back keyed by column, or as arrays when the call asks for rowMode 'array'
// (the claim does: no keyed object per row on the hot path).
import type pg from 'pg';

export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
  query<R extends unknown[] = unknown[]>(config: pg.QueryArrayConfig): Promise<pg.QueryArrayResult<R>>;
}

/** JSON text of a parameter; undefined is stored as null. */
export function jsonParam(value: unknown): string {
  return JSON.stringify(value === undefined ? null : value);
}

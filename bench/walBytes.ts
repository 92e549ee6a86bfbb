// WAL written during a measurement, counted two ways.
//
// Server-wide: pg_wal_lsn_diff of pg_current_wal_lsn() after and before.
// Cheap and always available, but it counts everything the server wrote
// meanwhile: the benchmark's own database, checkpoints, and every other
// database's work on a shared server.
//
// This database: the window's WAL read back with pg_walinspect
// (PostgreSQL 15+, superuser or pg_read_server_files), keeping the records
// that touch a block of the benchmark's database (`rel <tablespace>/<db
// oid>/<relfilenode>` in their block references) and the commit and abort
// records of the transactions that wrote those. From the same records: the
// full-page-image bytes, the commits, and the B-tree entries inserted
// (leaf inserts, posting-list inserts and leaf-level splits, which carry
// their new item). A temporary replication slot keeps the window's WAL
// until it is read. Caveats: writes to UNLOGGED tables make no WAL, so
// their index entries are not counted (and a transaction that wrote only
// those leaves a commit record this attribution misses); the figures are
// null, with the reason, when the extension or the slot is not available.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** One relation's share of the database's WAL (or the commit records', or the other relations'). */
export interface RelationWal {
  /** A table or index of the system's schema, `(commit records)` or `(other relations)`: catalogs, TOAST. */
  relation: string;
  bytes: number;
  fullPageImageBytes: number;
  /** B-tree entries inserted into it (0 for a table). */
  indexEntries: number;
}

export interface DatabaseWal {
  bytes: number;
  fullPageImageBytes: number;
  commits: number;
  indexEntries: number;
  /** By relation (the one the record's first block belongs to), largest first. */
  relations: RelationWal[];
}

/**
 * Installs pg_walinspect in the benchmark's database and keeps the WAL
 * written from now on until `c` disconnects (a temporary physical
 * replication slot, dropped with the session), so a checkpoint during the
 * window cannot recycle it before it is read. Returns the reason it cannot,
 * or undefined.
 */
export async function holdWalForInspection(c: pg.Client): Promise<string | undefined> {
  try {
    await c.query('create extension if not exists pg_walinspect');
  } catch (err) {
    return `pg_walinspect unavailable: ${(err as Error).message}`;
  }
  try {
    await c.query('select pg_create_physical_replication_slot($1, true, true)', [`wh_bench_wal_${randomBytes(6).toString('hex')}`]);
    return undefined;
  } catch (err) {
    return `cannot hold the WAL for reading (a temporary replication slot): ${(err as Error).message}`;
  }
}

export async function currentWalLsn(c: pg.Client): Promise<string> {
  const r = await c.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn');
  return r.rows[0]!.lsn;
}

export async function walBytesBetween(c: pg.Client, from: string, to: string): Promise<number> {
  const r = await c.query<{ bytes: string }>('select pg_wal_lsn_diff($2::pg_lsn, $1::pg_lsn) as bytes', [from, to]);
  return Number(r.rows[0]!.bytes);
}

/** Waits until the server has flushed WAL up to `lsn` (pg_walinspect reads flushed WAL only). */
async function waitForFlush(c: pg.Client, lsn: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await c.query<{ ok: boolean }>('select pg_current_wal_flush_lsn() >= $1::pg_lsn as ok', [lsn]);
    if (r.rows[0]!.ok) return;
    if (Date.now() > deadline) throw new Error(`WAL not flushed up to ${lsn} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// $3 matches a block of this database and captures its relfilenode.
const DATABASE_WAL_SQL = `
  with r as (
    select xid::text as xid, resource_manager as rm, record_type as type,
           record_length, fpi_length, description, block_ref
      from pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)
  ),
  mine as (select *, substring(block_ref from $3)::oid as filenode from r where block_ref ~ $3),
  writers as (select distinct xid from mine where xid <> '0'),
  ours as (
    select rm, type, record_length, fpi_length, description, filenode from mine
    union all
    select rm, type, record_length, fpi_length, description, null from r
     where rm = 'Transaction' and xid in (select xid from writers)
  )
  select case when o.filenode is null then '(commit records)'
              when n.nspname = $4 then c.relname::text
              else '(other relations)' end as relation,
         sum(o.record_length)::bigint as bytes,
         sum(o.fpi_length)::bigint as fpi_bytes,
         count(*) filter (where o.rm = 'Transaction' and o.type like 'COMMIT%') as commits,
         count(*) filter (
           where o.rm = 'Btree'
             and (o.type in ('INSERT_LEAF', 'INSERT_POST')
                  or (o.type in ('SPLIT_L', 'SPLIT_R') and o.description ~ '^level:? 0,'))
         ) as index_entries
    from ours o
    left join pg_class c on c.relfilenode = o.filenode
    left join pg_namespace n on n.oid = c.relnamespace
   group by 1
   order by 2 desc`;

/**
 * The window's WAL that belongs to the database `c` is connected to, by
 * relation (names from `schema`), or the reason it cannot be read.
 */
export async function databaseWalBetween(c: pg.Client, from: string, to: string, schema: string): Promise<DatabaseWal | string> {
  try {
    await waitForFlush(c, to);
    const oid = await c.query<{ oid: number }>('select oid from pg_database where datname = current_database()');
    const blockOfThisDatabase = ` rel [0-9]+/${oid.rows[0]!.oid}/([0-9]+)`;
    const r = await c.query<{ relation: string; bytes: string; fpi_bytes: string; commits: string; index_entries: string }>(
      DATABASE_WAL_SQL,
      [from, to, blockOfThisDatabase, schema],
    );
    const relations = r.rows.map((x) => ({
      relation: x.relation,
      bytes: Number(x.bytes),
      fullPageImageBytes: Number(x.fpi_bytes),
      indexEntries: Number(x.index_entries),
    }));
    const sum = (pick: (x: RelationWal) => number) => relations.reduce((n, x) => n + pick(x), 0);
    return {
      bytes: sum((x) => x.bytes),
      fullPageImageBytes: sum((x) => x.fullPageImageBytes),
      commits: r.rows.reduce((n, x) => n + Number(x.commits), 0),
      indexEntries: sum((x) => x.indexEntries),
      relations,
    };
  } catch (err) {
    return `WAL not readable: ${(err as Error).message}`;
  }
}

// What one drain made PostgreSQL write, per job: WAL bytes (server-wide and
// this database's), full-page images, commits, B-tree entries, and rows
// inserted, updated (HOT among them) and deleted, by table; and what it read
// through indexes (entries and the rows fetched through them, by index:
// indexReads.ts), where a claim's walk past leased and settled rows shows.
// A window opens
// after the fill, once the fill's backends have gone, and closes after the
// workers stopped and their backends have gone too, so the row counters
// are complete (a backend publishes them when it exits) and the window
// holds the whole drain: start-up, every claim and settlement, shutdown.
import pg from 'pg';
import { entriesRead, readIndexReads, readsBetween, rowsFetched, type IndexReads } from './indexReads.js';
import { readTableWrites, rowsWritten, writesBetween, type TableWrites } from './rowsWritten.js';
import { currentWalLsn, databaseWalBetween, holdWalForInspection, walBytesBetween, type DatabaseWal, type RelationWal } from './walBytes.js';

export interface WriteCost {
  /** WAL the whole server wrote during the window, per job (other databases' WAL included). */
  serverWalBytesPerJob: number;
  /** WAL records of this database's blocks and of its writers' commits, per job; null when unreadable. */
  databaseWalBytesPerJob: number | null;
  /** The full-page images among them, per job. */
  fullPageImageBytesPerJob: number | null;
  /** Commit records of transactions that wrote this database, per job. */
  commitsPerJob: number | null;
  /** B-tree entries inserted in this database's WAL-logged indexes, per job. */
  indexEntriesPerJob: number | null;
  /** Inserts + updates + deletes in the system's schema, per job. */
  rowsWrittenPerJob: number;
  /** The HOT updates among those updates, per job. */
  hotUpdatesPerJob: number;
  /** Per table, per job (tables the drain did not write are left out). */
  tables: TableWrites[];
  /** Index entries the system's statements read, per job (pg_stat_user_indexes). */
  indexEntriesReadPerJob: number;
  /** Live rows fetched through those entries, per job. */
  indexRowsFetchedPerJob: number;
  /** Per index, per job (indexes the drain did not read are left out). */
  indexReads: IndexReads[];
  /** This database's WAL per job by relation, largest first; null when unreadable. */
  walByRelation: RelationWal[] | null;
  /** Why the database's WAL figures are null, when they are. */
  databaseWalNote?: string;
}

export interface WriteWindow {
  /** Waits for the workers' backends to go, reads the counters, ends the window. */
  close(jobs: number): Promise<WriteCost>;
  /** Ends the window without reading it (the drain failed). */
  discard(): Promise<void>;
}

/** Waits until no client backend but `c`'s own and `except` is connected to `c`'s database. */
async function waitForBackendsToExit(c: pg.Client, except: number[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await c.query<{ n: string }>(
      `select count(*) as n from pg_stat_activity
        where datname = current_database() and backend_type = 'client backend'
          and pid <> pg_backend_pid() and pid <> all($1::int[])`,
      [except],
    );
    if (Number(r.rows[0]!.n) === 0) return;
    if (Date.now() > deadline) throw new Error(`benchmark database still has ${r.rows[0]!.n} backends after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const perJob = (n: number, jobs: number) => n / jobs;

async function readCost(c: pg.Client, schema: string, start: WindowStart, jobs: number): Promise<WriteCost> {
  const tables = writesBetween(start.tables, await readTableWrites(c, schema));
  const reads = readsBetween(start.indexes, await readIndexReads(c, schema));
  const toLsn = await currentWalLsn(c);
  const serverWal = await walBytesBetween(c, start.lsn, toLsn);
  const own = start.walUnreadable ?? (await databaseWalBetween(c, start.lsn, toLsn, schema));
  const ownFigure = (pick: (w: DatabaseWal) => number) => (typeof own === 'string' ? null : perJob(pick(own), jobs));
  return {
    serverWalBytesPerJob: perJob(serverWal, jobs),
    databaseWalBytesPerJob: ownFigure((w) => w.bytes),
    fullPageImageBytesPerJob: ownFigure((w) => w.fullPageImageBytes),
    commitsPerJob: ownFigure((w) => w.commits),
    indexEntriesPerJob: ownFigure((w) => w.indexEntries),
    rowsWrittenPerJob: perJob(rowsWritten(tables), jobs),
    hotUpdatesPerJob: perJob(
      tables.reduce((n, t) => n + t.hotUpdates, 0),
      jobs,
    ),
    tables: tables.map((t) => ({
      table: t.table,
      inserts: perJob(t.inserts, jobs),
      updates: perJob(t.updates, jobs),
      hotUpdates: perJob(t.hotUpdates, jobs),
      deletes: perJob(t.deletes, jobs),
    })),
    indexEntriesReadPerJob: perJob(entriesRead(reads), jobs),
    indexRowsFetchedPerJob: perJob(rowsFetched(reads), jobs),
    indexReads: reads.map((x) => ({
      index: x.index,
      table: x.table,
      scans: perJob(x.scans, jobs),
      entriesRead: perJob(x.entriesRead, jobs),
      rowsFetched: perJob(x.rowsFetched, jobs),
    })),
    walByRelation:
      typeof own === 'string'
        ? null
        : own.relations.map((x) => ({
            relation: x.relation,
            bytes: perJob(x.bytes, jobs),
            fullPageImageBytes: perJob(x.fullPageImageBytes, jobs),
            indexEntries: perJob(x.indexEntries, jobs),
          })),
    ...(typeof own === 'string' ? { databaseWalNote: own } : {}),
  };
}

interface WindowStart {
  tables: TableWrites[];
  indexes: IndexReads[];
  lsn: string;
  walUnreadable: string | undefined;
}

/**
 * Opens the window on the benchmark database `url` for the tables of
 * `schema`; `except` lists backends that may stay connected (a held
 * snapshot) and write nothing. The window keeps one idle connection open
 * until it closes: it holds the window's WAL (walBytes.ts), and the backend
 * CPU readings around the drain see the same backend before and after.
 */
export async function openWriteWindow(url: string, schema: string, except: number[] = []): Promise<WriteWindow> {
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => undefined);
  await c.connect();
  try {
    const walUnreadable = await holdWalForInspection(c);
    await waitForBackendsToExit(c, except);
    const start: WindowStart = { tables: await readTableWrites(c, schema), indexes: await readIndexReads(c, schema), lsn: await currentWalLsn(c), walUnreadable };
    return {
      async close(jobs) {
        try {
          await waitForBackendsToExit(c, except);
          return await readCost(c, schema, start, jobs);
        } finally {
          await c.end();
        }
      },
      discard: () => c.end().catch(() => undefined),
    };
  } catch (err) {
    await c.end().catch(() => undefined);
    throw err;
  }
}

// The few statements the benchmark runs outside any queue system's API:
// a bulk fixture insert (generate_series, far faster than any enqueue
// path, so a million ready rows take seconds), relation sizes, and the
// held-xmin transaction. The queries of PostgreSQL's own counters live with
// the figure each measures (serverCpu.ts, walBytes.ts, rowsWritten.ts,
// durability.ts).
import pg from 'pg';

/** Inserts `count` ready no-op jobs straight into workhorse.jobs in one statement. */
export async function insertReadyJobs(db: pg.Pool | pg.Client, ns: string, queue: string, type: string, count: number): Promise<void> {
  await db.query(
    `insert into workhorse.jobs (namespace, queue, type, payload, run_at)
     select $1, $2, $3, jsonb_build_object('i', g), now() - interval '1 second'
       from generate_series(1, $4::integer) g`,
    [ns, queue, type, count],
  );
  await db.query('analyze workhorse.jobs');
}

export interface RelationSize {
  relation: string;
  tableBytes: number;
  indexBytes: number;
  liveRows: number;
  deadRows: number;
}

/** Heap (with TOAST) and index bytes of the workhorse hot tables. */
export async function workhorseSizes(db: pg.Pool | pg.Client): Promise<RelationSize[]> {
  const r = await db.query<{ relation: string; table_bytes: string; index_bytes: string; live: string; dead: string }>(
    `select c.relname as relation,
            pg_table_size(c.oid) as table_bytes,
            pg_indexes_size(c.oid) as index_bytes,
            coalesce(s.n_live_tup, 0) as live,
            coalesce(s.n_dead_tup, 0) as dead
       from pg_class c
       join pg_namespace n on n.oid = c.relnamespace
       left join pg_stat_user_tables s on s.relid = c.oid
      where n.nspname = 'workhorse' and c.relkind = 'r'
        and c.relname in ('jobs', 'job_runtime', 'job_attempts', 'job_steps')
      order by c.relname`,
  );
  return r.rows.map((x) => ({
    relation: x.relation,
    tableBytes: Number(x.table_bytes),
    indexBytes: Number(x.index_bytes),
    liveRows: Number(x.live),
    deadRows: Number(x.dead),
  }));
}

/** VACUUM (not FULL) of the workhorse hot tables, as autovacuum would do. */
export async function vacuumWorkhorse(db: pg.Pool | pg.Client): Promise<void> {
  for (const t of ['jobs', 'job_runtime', 'job_attempts', 'job_steps']) await db.query(`vacuum workhorse.${t}`);
}

/**
 * Opens a REPEATABLE READ transaction and takes its snapshot (its first
 * query, which also returns the backend's pid), then holds it: no row
 * version deleted after this point can be vacuumed away in this database
 * until release() commits it.
 */
export async function holdSnapshot(url: string): Promise<{ pid: number; release(): Promise<void> }> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query('begin isolation level repeatable read');
  const r = await c.query<{ pid: number }>('select pg_backend_pid() as pid');
  return {
    pid: r.rows[0]!.pid,
    async release() {
      await c.query('commit').catch(() => undefined);
      await c.end();
    },
  };
}

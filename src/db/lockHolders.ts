// Who is in a migration's way: the sessions holding locks on tables of the
// workhorse schema in transactions open longer than the migration waited
// (a migration's DDL waits behind them, and every query of the fleet then
// waits behind the DDL's lock request, so the migration waits only a short
// lock timeout per attempt and, when it gives up, names them), and the
// session holding the migration lock itself (another migration, perhaps
// one whose process froze mid-way).
import type pg from 'pg';
import type { LockHolder } from '../errors.js';

/** What is shown of a session (state, user and application only to a login that may read them). */
const SESSION = `a.pid, a.state, a.usename::text, nullif(a.application_name, '') as application_name,
            (date_part('epoch', clock_timestamp() - a.xact_start) * 1000)::float8 as xact_ms`;

interface SessionRow {
  pid: number;
  state: string | null;
  usename: string | null;
  application_name: string | null;
  xact_ms: number | null;
}

function holderOf(row: SessionRow): LockHolder {
  return { pid: row.pid, state: row.state, user: row.usename, applicationName: row.application_name, transactionMs: row.xact_ms };
}

/** Sessions (not this one) holding a granted lock on a workhorse relation in a transaction older than `olderThanMs`. */
export async function lockHolders(client: pg.ClientBase, olderThanMs: number): Promise<LockHolder[]> {
  const r = await client.query<SessionRow>(
    `select ${SESSION}
       from pg_stat_activity a
      where a.pid <> pg_backend_pid()
        and a.xact_start < clock_timestamp() - $1 * interval '1 millisecond'
        and exists (select 1 from pg_locks l
                      join pg_class c on c.oid = l.relation
                      join pg_namespace n on n.oid = c.relnamespace
                     where l.pid = a.pid and l.granted and n.nspname = 'workhorse')
      order by a.xact_start
      limit 10`,
    [olderThanMs],
  );
  return r.rows.map(holderOf);
}

/**
 * The session holding the migration's advisory lock in this database
 * (sql/bootstrap.sql's 7700011999: a bigint key is kept as classid = its
 * high 32 bits, objid = its low 32 bits, objsubid = 1).
 */
export async function migrationLockHolders(client: pg.ClientBase): Promise<LockHolder[]> {
  const r = await client.query<SessionRow>(
    `select ${SESSION}
       from pg_locks l join pg_stat_activity a on a.pid = l.pid
      where l.locktype = 'advisory' and l.granted and l.objsubid = 1
        and l.classid = (7700011999::bigint >> 32)::oid and l.objid = (7700011999::bigint & 4294967295)::oid
        and l.database = (select oid from pg_database where datname = current_database())`,
  );
  return r.rows.map(holderOf);
}

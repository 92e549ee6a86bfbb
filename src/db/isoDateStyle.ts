// PostgreSQL writes timestamps in the session's DateStyle, and the driver
// parses only ISO: under any other output style (a database or role set to
// `SQL, DMY`, `German`, `Postgres`) every timestamp it reads becomes null, so
// reads lost their dates and the schedule runner, seeing no database clock,
// never fired a slot. Each pool workhorse makes therefore sets ISO on every
// new connection, as a SET (a pooler such as PgBouncer refuses an `options`
// startup parameter but carries a DateStyle set in a session).
import type pg from 'pg';

/** Queued before anything else on each new connection of `pool`; a failure shows on that connection's first query. */
export function keepIsoDateStyle(pool: pg.Pool): void {
  pool.on('connect', (client) => {
    client.query('set datestyle to iso').catch(() => undefined);
  });
}

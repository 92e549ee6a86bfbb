// PostgreSQL writes timestamps in the session's DateStyle, and the driver
// parses only ISO: under any other output style (a database or role set to
// `SQL, DMY`, `German`, `Postgres`) every timestamp it reads becomes null, so
// reads lost their dates and the schedule runner, seeing no database clock,
// never fired a slot. Each pool workhorse makes therefore sets ISO on every
// new connection before lending it out (pg-pool's onConnect hook), as a SET:
// a pooler such as PgBouncer refuses an `options` startup parameter but
// carries a DateStyle set in a session.
import type pg from 'pg';

/** How long the SET may take; a connection that does not answer it is not lent out. */
const SET_TIMEOUT_MS = 10_000;

/** pg-pool's onConnect hook: the connection is lent out once it uses ISO dates. */
export async function useIsoDateStyle(client: pg.ClientBase): Promise<void> {
  await client.query({ text: 'set datestyle to iso', query_timeout: SET_TIMEOUT_MS } as pg.QueryConfig);
}

// What every connection of a pool workhorse makes sets before it is lent out
// (pg-pool's onConnect hook), in one round trip:
//
// - DateStyle ISO. PostgreSQL writes timestamps in the session's DateStyle,
//   and the driver parses only ISO: under any other output style (a
//   database or role set to `SQL, DMY`, `German`, `Postgres`) every
//   timestamp it reads became null, so reads lost their dates and the
//   schedule runner, seeing no database clock, never fired a slot.
// - client_connection_check_interval (PostgreSQL 14 and later). A call
//   that outlasts its timeout is ended on the client's side by destroying
//   the socket; without this setting the backend does not notice until it
//   tries to answer, so a statement waiting on a lock ran to its commit
//   after the worker had given up on it: a claim then leased jobs nobody
//   would run, and their recovery counted an attempt for a handler that
//   never started. With it, a backend whose client is gone aborts (rolls
//   back) its statement within CONNECTION_CHECK_MS, whether it is waiting
//   on a lock or executing. Older servers skip it (the CASE never calls
//   set_config there).
//
// Both as SETs in the session, not as an `options` startup parameter: a
// pooler such as PgBouncer refuses that parameter but carries a session SET.
import type pg from 'pg';

/** How long the setup may take; a connection that does not answer it is not lent out. */
const SETUP_TIMEOUT_MS = 10_000;

/** How often a backend running a statement checks that its client is still there. */
export const CONNECTION_CHECK_MS = 1_000;

const SETUP_SQL = `select set_config('datestyle', 'iso', false),
  case when current_setting('server_version_num')::integer >= 140000
       then set_config('client_connection_check_interval', '${CONNECTION_CHECK_MS}', false) end`;

/** pg-pool's onConnect hook: the connection is lent out once it uses ISO dates and checks for a vanished client. */
export async function prepareConnection(client: pg.ClientBase): Promise<void> {
  await client.query({ text: SETUP_SQL, query_timeout: SETUP_TIMEOUT_MS } as pg.QueryConfig);
}

// An error met while a new connection was being made, before any statement
// of the caller ran: the server refused the session (a setting in the
// connection string it rejects, `options=-c work_mem=abc`), the connection
// settings could not be used (`sslmode=require` against a server without
// SSL, an `sslcert` file that cannot be read), or the login was refused.
// Nothing the request or the call sent caused it, so the HTTP API answers
// it as the database being unreachable (503), not as bad input (a class 22
// refusal of the connection's own setting was a 400) or a bug (a 500), and
// the data layer passes it on unmapped (sqlState.ts, mapDbError). The
// connection paths tag what they meet (guardedDb.ts); a network fault is
// typed on its own there (DatabaseUnavailableError).
const refused = new WeakSet<object>();

/** Tags `err` as met while connecting; returns it. */
export function markConnectRefusal<E>(err: E): E {
  if (typeof err === 'object' && err !== null) refused.add(err);
  return err;
}

/** Whether `err` (or its cause) was met while a connection was being made (a refused login among them). */
export function isConnectRefusal(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  if (refused.has(err)) return true;
  const cause = (err as { cause?: unknown }).cause;
  return typeof cause === 'object' && cause !== null && refused.has(cause);
}

// The one mapping from the SQLSTATEs the protocol raises (sql/protocol/
// errors.sql) to workhorse's typed errors. Every data-access module sends
// its failures through `mapDbError`; anything it does not know passes
// through unchanged (a database fault stays a pg error, which transient.ts
// classifies).
import {
  ClientClosedError,
  DatabaseUnavailableError,
  SchemaVersionError,
  StaleLeaseError,
  ValidationError,
  WorkerNotRegisteredError,
} from '../errors.js';
import { SCHEMA_VERSION } from './schemaVersion.js';
import { isConnectRefusal } from './connectRefusal.js';

export const SQLSTATE = {
  stale: 'WH409',
  notRegistered: 'WH404',
  invalidArguments: 'WH422',
  schemaMismatch: 'WH426',
  undefinedFunction: '42883',
  invalidSchemaName: '3F000',
  /** query_canceled: a statement_timeout (set on the role, the database or the connection) or pg_cancel_backend ended the statement. */
  queryCanceled: '57014',
  /** lock_not_available: a lock_timeout (set on the role, the database or the connection) ended a statement waiting for a lock. */
  lockNotAvailable: '55P03',
  /** insufficient_privilege: the login may not do what the statement does (a runtime login running a migration). */
  insufficientPrivilege: '42501',
  /** read_only_sql_transaction: the session is read-only (a standby, or default_transaction_read_only when it began). */
  readOnly: '25006',
} as const;

/** What PostgreSQL says when a call reaches a database that was never migrated. */
const NO_SCHEMA = 'schema "workhorse" does not exist';

/** pg-pool's error for a call on a pool that was ended (the client closed): a ClientClosedError. */
export const POOL_ENDED = 'Cannot use a pool after calling end on the pool';

export function sqlStateOf(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null ? (err as { code?: string }).code : undefined;
}

/**
 * A statement PostgreSQL cancelled (57014): a statement_timeout or a
 * pg_cancel_backend. The connection still works, but a statement_timeout
 * of its session stays what it was when it connected: guardedDb.ts replaces it.
 * The client's calls wrap it in a DatabaseUnavailableError: its cause is read too.
 */
export function isQueryCanceled(err: unknown): boolean {
  return sqlStateOf(err) === SQLSTATE.queryCanceled || causeState(err) === SQLSTATE.queryCanceled;
}

/** The SQLSTATE of the pg error a client call's DatabaseUnavailableError wraps (guardedDb.ts), if it wraps one. */
export function causeState(err: unknown): string | undefined {
  return err instanceof DatabaseUnavailableError ? sqlStateOf(err.cause) : undefined;
}

/**
 * The server refused the login itself: no such database (3D000), a role
 * that does not exist or may not connect (28000), a wrong password (28P01).
 * Only a new connection meets it, and nothing the request sent caused it.
 */
export function loginRefusal(err: unknown, depth = 0): string | undefined {
  if (typeof err !== 'object' || err === null || depth > 3) return undefined;
  const code = sqlStateOf(err);
  if (code === '3D000' || code === '28000' || code === '28P01') return code;
  // Wrapped (a tick's DatabaseUnavailableError around the client's, around pg's), or an AggregateError.
  const errors = (err as { errors?: unknown }).errors;
  for (const e of [(err as { cause?: unknown }).cause, ...(Array.isArray(errors) ? errors : [])]) {
    const found = loginRefusal(e, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** PostgreSQL ended the session itself: class 08 (connection exception) or 57P01-57P03 (terminated, crashed, starting up). */
export function isSessionEnded(err: unknown): boolean {
  const code = sqlStateOf(err);
  return typeof code === 'string' && (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03');
}

/**
 * A write refused because the session is read-only (25006). The session
 * stays so for its life (it reached a standby, or began while the database
 * said default_transaction_read_only), whatever the server becomes: its
 * connection is to be replaced, not reused. The client's calls wrap it in
 * a DatabaseUnavailableError (guardedDb.ts): its cause is read too.
 */
export function isReadOnlySession(err: unknown): boolean {
  return sqlStateOf(err) === SQLSTATE.readOnly || causeState(err) === SQLSTATE.readOnly;
}

/** A statement a lock_timeout ended while it waited for a lock another session holds (55P03): the lock may end, the connection stays usable. */
export function isLockTimeout(err: unknown): boolean {
  return sqlStateOf(err) === SQLSTATE.lockNotAvailable;
}

/** PostgreSQL cannot hold the value at all (class 54, program limit exceeded: a jsonb string over 256 MiB, nesting too deep). */
export function isProgramLimitExceeded(err: unknown): boolean {
  const code = sqlStateOf(err);
  return typeof code === 'string' && code.startsWith('54');
}

/** What the failed call was about, so the typed error can say so. */
export interface ErrorContext {
  /** The lease a fenced write carried. */
  lease?: { id: string; execution: number };
  /** What was being written, for StaleLeaseError ("step \"send\"", "progress", ...). */
  what?: string;
  workerId?: string;
  namespace?: string;
  /** The schema version the caller expects. */
  expectedVersion?: number;
}

/** An id sequence at its maximum (nextval refused): class 22, and no caller's value at fault (operatorFixable.ts). */
const SEQUENCE_EXHAUSTED = '2200H';

/** A PostgreSQL data exception (class 22: bad encoding, out of range, invalid syntax ...) about a value the caller gave. */
function isDataException(err: unknown, code: string | undefined): boolean {
  return err instanceof Error && 'severity' in err && typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code) && code !== SEQUENCE_EXHAUSTED;
}

/**
 * The typed error a protocol SQLSTATE stands for, or the error itself. A
 * value PostgreSQL refused as a data exception (class 22) that got past
 * validation is bad input too: a ValidationError naming the column when the
 * server does.
 */
export function mapDbError(err: unknown, ctx: ErrorContext = {}): unknown {
  // Met while connecting (a setting of the connection string refused): not about the call's values.
  if (isConnectRefusal(err)) return err;
  const code = sqlStateOf(err);
  const message = err instanceof Error ? err.message : String(err);
  if (message === POOL_ENDED && code === undefined) return new ClientClosedError({ cause: err, poolEnded: true });
  if (isDataException(err, code)) {
    const column = (err as { column?: string }).column;
    return new ValidationError(`the database refused a value${column ? ` of ${column}` : ''}: ${message}`, [
      { path: column ? [column] : [], message },
    ]);
  }
  switch (code) {
    case SQLSTATE.stale:
      return ctx.lease ? new StaleLeaseError(ctx.lease.id, ctx.lease.execution, ctx.what) : err;
    case SQLSTATE.notRegistered:
      return new WorkerNotRegisteredError(ctx.workerId ?? '?', ctx.namespace ?? '?');
    case SQLSTATE.invalidArguments:
      return new ValidationError(message, [{ path: [], message }]);
    case SQLSTATE.invalidSchemaName:
      // A call on a database never migrated: the same SchemaVersionError the
      // enqueue's schema check gives, not pg's bare error.
      return message === NO_SCHEMA ? new SchemaVersionError(null, ctx.expectedVersion ?? SCHEMA_VERSION) : err;
    case SQLSTATE.schemaMismatch: {
      const detail = (err as { detail?: string }).detail;
      return new SchemaVersionError(detail ? Number(detail) : null, ctx.expectedVersion ?? 0);
    }
    default:
      return err;
  }
}

/** Runs a call and rethrows its failure mapped. */
export async function mapped<T>(ctx: ErrorContext, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw mapDbError(err, ctx);
  }
}

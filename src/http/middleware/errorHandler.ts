// Turns every failure into the one error shape, `{ error: { code, message,
// issues? } }`, with the status its typed error stands for. A value
// PostgreSQL refused as a data exception (SQLSTATE class 22) that got past
// validation is bad input too: 400 `validation_failed`, naming the column
// when the database does. A database that does not answer (down, restarting,
// its backends terminated, out of connections, a statement cancelled by its
// statement_timeout or ended by its lock_timeout, or refusing the server's
// login: a wrong password, a dropped database) is 503 `database_unreachable`
// with Retry-After: 1 and one log line without a stack, as is a session the
// database refuses or connection settings that cannot be used (`sslmode=require`
// against a server without SSL, a setting in `options` it rejects). A client that went away is answered (to nobody)
// without a log line. A ConfigError (the server's app cannot parse a payload
// at all: a job schema with an async refine) is a 500 saying so, logged.
// Anything else unexpected is a 500 that says nothing about internals; the
// real error goes to the configured log.
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import {
  ClientClosedError,
  ConfigError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  PayloadTooLargeError,
  SchemaVersionError,
  UnauthorizedError,
  UnknownJobTypeError,
  UnsupportedMediaTypeError,
  ValidationError,
  type ValidationIssue,
} from '../../errors.js';
import { isLockTimeout, isQueryCanceled, isReadOnlySession, loginRefusal, mapDbError } from '../../db/sqlState.js';
import { describeDbError, isTransientDbError } from '../../db/transient.js';
import { operatorHint } from '../../db/operatorFixable.js';
import { isConnectRefusal } from '../../db/connectRefusal.js';
import { ClientGoneError } from '../clientGoneError.js';

export interface ErrorBody {
  code: string;
  message: string;
  issues?: ValidationIssue[];
}

export function errorResponse(c: Context, status: ContentfulStatusCode, error: ErrorBody): Response {
  return c.json({ error }, status);
}

/** Status 499 (nginx's "client closed request"): the client is gone and reads nothing. */
const CLIENT_CLOSED = 499 as ContentfulStatusCode;

/** Whether a failure means the database did not answer, rather than that the request was wrong. */
export function isDatabaseUnavailable(err: unknown): boolean {
  return isTransientDbError(err) || isQueryCanceled(err) || isLockTimeout(err);
}

/** The status and body a thrown error maps to; undefined for an unexpected one. */
export function describeError(thrown: unknown): { status: ContentfulStatusCode; body: ErrorBody } | undefined {
  // A session the database refused, or a connection the server's settings could not make: the server's
  // configuration, never the request (a setting it rejects is class 22, which would read as bad input).
  if (isConnectRefusal(thrown) && !loginRefusal(thrown)) {
    return { status: 503, body: { code: 'database_unreachable', message: `${CONNECT_REFUSED}: its log says why; retry shortly` } };
  }
  // A database error that slipped past the data layer gets the same mapping (class 22 is bad input).
  const err = mapDbError(thrown);
  if (err instanceof ValidationError) return { status: 400, body: { code: err.code, message: err.message, issues: err.issues } };
  if (err instanceof UnknownJobTypeError) return { status: 400, body: { code: err.code, message: err.message } };
  if (err instanceof PayloadTooLargeError) return { status: 413, body: { code: err.code, message: err.message } };
  if (err instanceof UnsupportedMediaTypeError) return { status: 415, body: { code: err.code, message: err.message } };
  if (err instanceof UnauthorizedError) return { status: 401, body: { code: err.code, message: err.message } };
  if (err instanceof ForbiddenError) return { status: 403, body: { code: err.code, message: err.message } };
  if (err instanceof NotFoundError) return { status: 404, body: { code: err.code, message: err.message } };
  if (err instanceof ConflictError) return { status: 409, body: { code: err.code, message: err.message } };
  if (err instanceof SchemaVersionError) return { status: 503, body: { code: err.code, message: err.message } };
  // The server closed its database client (it is shutting down) while the request ran.
  if (err instanceof ClientClosedError) return { status: 503, body: { code: 'shutting_down', message: 'the server is shutting down; retry shortly' } };
  // A login the server refuses (a wrong password, a dropped database): the server's configuration, not the request.
  const refused = loginRefusal(err);
  if (refused) {
    const message = `${LOGIN_REFUSED} (SQLSTATE ${refused}): its log says why; retry shortly`;
    return { status: 503, body: { code: 'database_unreachable', message } };
  }
  // A refusal only the database's operator can end (a workhorse function or table missing, grants revoked,
  // a full disk, an exhausted id sequence): not the request's fault, and no retry of it succeeds until then.
  // A tick's DatabaseUnavailableError may wrap one (POST /tick): asked before the fault below, which it also is.
  const needs = operatorHint(err);
  if (needs !== undefined) return { status: 503, body: { code: 'database_needs_operator', message: `the database refused the request: ${needs}` } };
  if (isDatabaseUnavailable(err)) {
    // A read-only session answered, and refused: say so (a failover in progress, a database set read-only).
    const message = isReadOnlySession(err)
      ? 'the database refused the write: it is read-only (a standby, or set read-only); retry shortly'
      : isQueryCanceled(err)
        ? 'the database cancelled the statement (a statement_timeout, or pg_cancel_backend); retry shortly'
        : 'the database did not answer; retry shortly';
    return { status: 503, body: { code: 'database_unreachable', message } };
  }
  if (err instanceof ClientGoneError) return { status: CLIENT_CLOSED, body: { code: 'client_closed', message: err.message } };
  // Not the request's fault but the server's (a job schema with an async refine, which no parse can
  // run): a 500 that says what is wrong, so the caller is not left with "internal error".
  if (err instanceof ConfigError) return { status: 500, body: { code: err.code, message: err.message } };
  if (err instanceof HTTPException && err.status >= 400 && err.status < 500) {
    return { status: err.status as ContentfulStatusCode, body: { code: 'bad_request', message: err.message || 'bad request' } };
  }
  return undefined;
}

/** What the log line of a request the database refused the login of says (the Lambda handler reads the credential again on it). */
export const LOGIN_REFUSED = "the database refused this server's login";

/** What a request answers, and its log line says, when no connection could be made for a reason other than a fault or the login. */
export const CONNECT_REFUSED = 'the server could not open a database connection (the database refused the session, or the connection settings cannot be used)';

/** How long a client should wait before retrying a `database_unreachable` answer, in seconds, on every route. */
export const UNREACHABLE_RETRY_AFTER = '1';

/**
 * What every route (the API's and the dashboard's) does for a failure
 * described as `database_unreachable`: `Retry-After: 1` and one log line
 * without a stack. `source` names the part of the app in the line.
 */
export function noteDatabaseUnreachable(c: Context, err: unknown, log: (message: string, err: unknown) => void, source: 'http' | 'ui'): void {
  const what = loginRefusal(err)
    ? LOGIN_REFUSED
    : isConnectRefusal(err)
      ? CONNECT_REFUSED
      : isReadOnlySession(err)
        ? 'the database refused the write: it is read-only'
        : isQueryCanceled(err)
          ? 'the database cancelled the statement'
          : 'the database did not answer';
  log(`[workhorse ${source}] ${c.req.method} ${c.req.path}: ${what}:`, describeDbError(err));
  c.header('Retry-After', UNREACHABLE_RETRY_AFTER);
}

export function errorHandler(log: (message: string, err: unknown) => void) {
  return (err: unknown, c: Context): Response => {
    const known = describeError(err);
    if (known?.body.code === 'database_unreachable') noteDatabaseUnreachable(c, err, log, 'http');
    if (known?.body.code === 'database_needs_operator') log(`[workhorse http] ${c.req.method} ${c.req.path}: ${known.body.message}:`, describeDbError(err));
    // The server's own configuration (an app's job schema it cannot run): the operator must hear of it too.
    if (known?.status === 500) log(`[workhorse http] ${c.req.method} ${c.req.path}: the server's configuration is invalid`, err);
    if (known) return errorResponse(c, known.status, known.body);
    // The client left mid-request: whatever failed, nobody is waiting for the answer.
    if (c.req.raw.signal?.aborted) return errorResponse(c, CLIENT_CLOSED, { code: 'client_closed', message: 'the client closed the connection' });
    log(`[workhorse http] ${c.req.method} ${c.req.path} failed`, err);
    return errorResponse(c, 500, { code: 'internal', message: 'internal error' });
  };
}

/**
 * The answer when no route matched: 405 `method_not_allowed` with an Allow
 * header when the path has routes for other methods (src/http/methods.ts),
 * 404 `not_found` otherwise.
 */
export function notFoundHandler(allowedOn: (path: string) => readonly string[]) {
  return (c: Context): Response => {
    const allowed = allowedOn(c.req.path);
    if (allowed.length > 0) {
      c.header('Allow', allowed.join(', '));
      return errorResponse(c, 405, {
        code: 'method_not_allowed',
        message: `${c.req.method} is not allowed on ${c.req.path}: use ${allowed.join(', ')}`,
      });
    }
    return errorResponse(c, 404, { code: 'not_found', message: `no route for ${c.req.method} ${c.req.path}` });
  };
}

// How workhorse logs a problem it carries on through (a worker with no
// `error` listener, a schedule runner without onError): one line for what
// it expects and retries (a database fault; any error PostgreSQL answered,
// such as a statement it cancelled, a lock timeout or a refused login while
// a password is rotated, whose stack is the driver's parser, the same on
// every retry, and printing it whole on every heartbeat flooded the log;
// workhorse's own typed errors, such as a worker the registry dropped,
// which registers again). Anything else (a bug) is printed whole.
import { faultHint } from './db/faultHint.js';
import { sqlStateOf } from './db/sqlState.js';
import { describeDbError, isTransientDbError } from './db/transient.js';
import { WorkhorseError } from './errors.js';

/** An error PostgreSQL sent (pg's DatabaseError: a severity and a five-character SQLSTATE). */
export function answeredByPostgres(err: unknown): boolean {
  const code = sqlStateOf(err);
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && typeof (err as { severity?: unknown }).severity === 'string';
}

/**
 * The one line an expected problem is logged as (`what`: what failed, a
 * database fault by default), or undefined for a bug, which is printed whole.
 */
export function carriedOnLine(err: unknown, what?: string): string | undefined {
  if (isTransientDbError(err) || answeredByPostgres(err)) {
    // What to do about it (or what happened), unless the line already says so.
    const hint = faultHint(err);
    const more = hint && !(what ?? '').includes(hint) ? `; ${hint}` : '';
    return `${what ?? 'database fault'}: ${describeDbError(err)}${more}`;
  }
  if (err instanceof WorkhorseError) return `${what ?? 'error'}: ${err.name}: ${err.message}`;
  return undefined;
}

/** Logs `err` under `prefix`: one line for what is expected, whole for a bug. */
export function logCarriedOn(prefix: string, err: unknown, what?: string): void {
  const line = carriedOnLine(err, what);
  if (line !== undefined) console.error(`${prefix} ${line}`);
  else console.error(`${prefix} ${what ?? 'error'}:`, err);
}

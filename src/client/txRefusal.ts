// A call made in the caller's transaction (`tx`) that the transaction itself
// refused: aborted by an earlier failed statement (25P02), or given on a pg
// client that was closed or released. The caller's mistake to fix, so a
// ValidationError at `tx` saying what to do (the driver's or PostgreSQL's
// error as its cause), rather than the raw error of a statement the caller
// never wrote. Anything else is passed on as it is.
import { ValidationError } from '../errors.js';
import { sqlStateOf } from '../db/sqlState.js';

/** What `err`, thrown by a call in the caller's `tx`, says about that transaction; `err` itself when it is not about it. */
export function txRefusal(err: unknown, call: string): unknown {
  const message =
    sqlStateOf(err) === '25P02'
      ? 'the transaction given as tx is aborted (an earlier statement in it failed): roll it back (or to a savepoint) before using it again'
      : err instanceof Error && /Client was closed|has already been released|not queryable/i.test(err.message)
        ? 'tx is a pg client that was closed or released: pass one that is connected and inside your transaction'
        : undefined;
  if (!message) return err;
  return new ValidationError(`${call}: ${message}`, [{ path: ['tx'], message }], { cause: err });
}

// A call made in the caller's transaction (`tx`) that the transaction itself
// refused: aborted by an earlier failed statement (25P02), given on a pg
// client that was closed or released, or on an object that is not a
// node-postgres client at all (its query() throws at once, or answers with
// something other than a result with `rows`, as another driver's
// transaction object does). The caller's mistake to fix, so a
// ValidationError at `tx` saying what to do (the driver's or PostgreSQL's
// error as its cause), rather than the raw error of a statement the caller
// never wrote. Anything else is passed on as it is.
import { ValidationError, WorkhorseError } from '../errors.js';
import { sqlStateOf } from '../db/sqlState.js';
import type { Queryable } from '../db/queryable.js';
import { isPgClient, isPgPool } from '../db/pgShape.js';

/** Errors already about `tx` (checkedTx's): txRefusal passes them on. */
const aboutTx = new WeakSet<Error>();

/**
 * `tx` with its query() checked when it is not node-postgres's own: a
 * synchronous throw, or an answer that is not a pg result (an object with a `rows` array), is a ValidationError at
 * `tx` instead of a TypeError from deep inside the call.
 */
export function checkedTx(tx: Queryable, call: string): Queryable {
  // node-postgres's own (a pool too: a batch of several chunks opens its transaction on one of its connections).
  if (isPgPool(tx) || isPgClient(tx)) return tx;
  const query = (...args: unknown[]): Promise<unknown> => {
    let answer: unknown;
    try {
      answer = (tx.query as (...a: unknown[]) => unknown)(...args);
    } catch (err) {
      throw shapeError(call, `tx.query() threw (${err instanceof Error ? err.message : String(err)})`, err);
    }
    return Promise.resolve(answer).then((res) => {
      if (typeof res !== 'object' || res === null || !Array.isArray((res as { rows?: unknown }).rows)) {
        throw shapeError(call, `tx.query() answered ${describe(res)}, not a node-postgres result with rows`);
      }
      return res;
    });
  };
  return { query } as Queryable;
}

function shapeError(call: string, what: string, cause?: unknown): ValidationError {
  const message = `${what}: pass a pg Client or PoolClient (node-postgres) inside your transaction`;
  const err = new ValidationError(`${call}: ${message}`, [{ path: ['tx'], message }], cause === undefined ? undefined : { cause });
  aboutTx.add(err);
  return err;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : typeof v;
}

/** What `err`, thrown by a call in the caller's `tx`, says about that transaction; `err` itself when it is not about it. */
export function txRefusal(err: unknown, call: string): unknown {
  // checkedTx's own, and workhorse's typed errors (a closed client, a schema of another version) are not about the transaction.
  if (err instanceof WorkhorseError || (err instanceof Error && aboutTx.has(err))) return err;
  const message =
    sqlStateOf(err) === '25P02'
      ? 'the transaction given as tx is aborted (an earlier statement in it failed): roll it back (or to a savepoint) before using it again'
      : err instanceof Error && /Client was closed|has already been released|not queryable/i.test(err.message)
        ? 'tx is a pg client that was closed or released: pass one that is connected and inside your transaction'
        : undefined;
  if (!message) return err;
  return new ValidationError(`${call}: ${message}`, [{ path: ['tx'], message }], { cause: err });
}

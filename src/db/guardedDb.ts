// The worker's (and the client's) way to use a pg pool so that no database
// fault can crash the process or hang it. Every call checks a client out, listens for its
// `error` events while it is held (pg emits them on a checked-out client
// when the server terminates the backend or the socket dies, and an event
// with no listener kills the process), bounds the checkout and the call by
// a timeout (a frozen connection otherwise waits forever), and hands a
// broken client back with its error so the pool destroys it instead of
// lending it out again.
import type pg from 'pg';
import { ClientClosedError, DatabaseUnavailableError } from '../errors.js';
import type { Queryable } from './queryable.js';
import { isLockTimeout, isQueryCanceled, isReadOnlySession, isSessionEnded, POOL_ENDED, SQLSTATE, sqlStateOf } from './sqlState.js';
import { operatorHint } from './operatorFixable.js';
import { describeDbError, isTransientDbError } from './transient.js';
import { markConnectRefusal } from './connectRefusal.js';
import { checkedOut, readOnlyRefused } from './readOnlyEra.js';

export interface GuardedDbOptions {
  /** A checkout plus one call may take this long before the connection is destroyed. */
  timeoutMs: number;
  /**
   * A connection that cannot be made for a database fault (refused, reset,
   * timed out, a server starting or shutting down) fails with
   * DatabaseUnavailableError, the pg or network error as its cause, rather
   * than with that error itself: what the client's callers catch. So does
   * a call whose connection is lost under it (a pooled connection the
   * server or the network reset while it sat idle: `write ECONNRESET`,
   * `Connection terminated unexpectedly`, SQLSTATE class 08 or
   * 57P01-57P03). An error PostgreSQL answered for any other reason is its
   * own.
   */
  typedConnectFaults?: boolean;
  /**
   * A statement PostgreSQL cancelled (57014: a statement_timeout of the
   * role or database) or refused for a privilege the login lacks (42501:
   * grants revoked) fails with DatabaseUnavailableError, pg's error as its
   * cause and what to do in its message: the client's callers catch one
   * typed fault (isQueryCanceled and operatorHint read the cause). Not for
   * the migrator, which tells a runtime login's 42501 apart itself.
   */
  typedRefusals?: boolean;
  /**
   * True once the owner was closed: every checkout then fails with
   * ClientClosedError, whether or not the pool itself was ended (a pool
   * the caller passed in stays open for its other users).
   */
  isClosed?: () => boolean;
  /**
   * An instant (ms since the epoch) no call may outlast: a checkout and its
   * query get whatever is left of it when that is less than `timeoutMs`. A
   * tick's calls end by its deadline, whatever the server does.
   */
  endBy?: number;
  /**
   * Run before every checkout; a promise it returns is awaited first, and
   * its rejection is the call's. The client's version check: its first
   * call of any kind, a read or an operator's write, is refused on a
   * schema of another version (undefined once it passed: no promise per call).
   */
  beforeCheckout?: () => Promise<void> | undefined;
}

/** Destroys the socket under a client: the in-flight query fails at once (pg has no call for it). */
export function destroySocket(client: pg.ClientBase): void {
  (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}

function isBroken(client: pg.PoolClient): boolean {
  return (client as unknown as { _queryable?: boolean })._queryable === false;
}

interface Held {
  client: pg.PoolClient;
  broken: Error | undefined;
  onError: (err: Error) => void;
  /** The connection was lent out before this checkout (readOnlyEra.ts). */
  reused: boolean;
}

/** Hands the client back, destroyed if it broke; pg-pool listens for its errors from here on. */
function release(h: Held): void {
  h.client.off('error', h.onError);
  h.client.release(h.broken ?? (isBroken(h.client) ? new Error('connection broken') : undefined));
}

export class GuardedDb implements Queryable {
  /** Calls under way (waiting for a connection or holding one), and who waits for there to be none (idle()). */
  private active = 0;
  private idleWaiters: (() => void)[] = [];
  /** The checkouts still waiting for a connection: each fails with ClientClosedError when called. */
  private readonly waiting = new Set<() => void>();

  constructor(
    readonly pool: pg.Pool,
    private readonly options: GuardedDbOptions,
  ) {}

  /**
   * Settles once no call is under way, or after `ms`: a closing client lets
   * the calls it already started finish before it ends its pool. A call
   * waiting for a connection when the pool ended was never served (pg-pool
   * leaves it queued), and failed only at the connect timeout, 10 s later,
   * as "database unavailable".
   */
  idle(ms: number): Promise<void> {
    if (this.active === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      timer.unref();
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /**
   * Its owner closed and ends the pool now: every checkout still waiting
   * for a connection fails with ClientClosedError, and so does every call
   * whose connection the ending cuts from here on (its error would blame the
   * database, and say retry).
   */
  failWaiting(): void {
    this.cutting = true;
    for (const fail of [...this.waiting]) fail();
  }

  /** Set by failWaiting(): a connection lost from here on was cut by the owner's close. */
  private cutting = false;

  /** How long a call starting now may take: the timeout, or what is left before `endBy` (at least 1 ms). */
  private boundMs(): number {
    const { timeoutMs, endBy } = this.options;
    return endBy === undefined ? timeoutMs : Math.max(1, Math.min(timeoutMs, Math.floor(endBy - Date.now())));
  }

  /** How a bound that ran out is named: its milliseconds, or the end of the calls' time when that cut it (a tick's). */
  private boundText(ms: number): string {
    const { timeoutMs, endBy } = this.options;
    return endBy !== undefined && ms < timeoutMs ? `before the end of its time for database calls (${ms} ms left)` : `within ${ms} ms`;
  }

  /**
   * Checks a client out within the timeout. The error listener is attached
   * in pg's own callback, synchronously: a FATAL message that arrives in the
   * same socket read as the new connection's ReadyForQuery (a backend
   * terminated the instant it became ready) would otherwise find no listener
   * while a promise continuation is still queued. A client that arrives
   * after the timeout is released unused.
   */
  private connect(): Promise<Held> {
    if (this.options.isClosed?.()) return Promise.reject(new ClientClosedError());
    return new Promise((resolve, reject) => {
      let late = false;
      const ms = this.boundMs();
      const giveUp = (err: Error) => {
        late = true;
        this.waiting.delete(closed);
        reject(err);
      };
      const timer = setTimeout(() => giveUp(new DatabaseUnavailableError(`no database connection ${this.boundText(ms)}`)), ms);
      const closed = () => {
        clearTimeout(timer);
        giveUp(new ClientClosedError());
      };
      this.waiting.add(closed);
      const connected = (err: Error | undefined, client: pg.PoolClient | undefined) => {
        clearTimeout(timer);
        this.waiting.delete(closed);
        if (err || !client) {
          if (!late) reject(err ? this.connectFailure(err) : new DatabaseUnavailableError('no database connection'));
          return;
        }
        const { reused, stale } = checkedOut(this.pool, client);
        if (stale && !late) {
          // A session from before a read-only refusal may be read-only for good: replaced, still within the timer.
          client.release(new Error('a connection from before a read-only refusal'));
          ask();
          return;
        }
        const held: Held = { client, broken: undefined, onError: (e: Error) => void (held.broken ??= e), reused };
        client.on('error', held.onError);
        if (late) release(held);
        else resolve(held);
      };
      const ask = () => this.pool.connect((err, client) => connected(err, client));
      try {
        ask();
      } catch (err) {
        // The driver read the connection settings as it made the client, and threw (an sslrootcert that is a
        // directory): a refused session like any other, and no timer left to hold the process open.
        connected(err instanceof Error ? err : new Error(String(err)), undefined);
      }
    });
  }

  private connectFailure(err: Error): Error {
    // Anything but a fault (the network's, or a set-up statement of the new session cancelled by a
    // statement_timeout or a lock timeout) or an ended pool (a closed client) is the session refused
    // (connectRefusal.ts).
    if (!isTransientDbError(err)) {
      // A set-up statement cancelled (a statement_timeout of the role): the client's callers get it typed, as a call's own.
      if (this.options.typedRefusals && isQueryCanceled(err)) return new DatabaseUnavailableError(`${QUERY_CANCELED}: ${describeDbError(err)}`, { cause: err });
      return err.message === POOL_ENDED || isQueryCanceled(err) || isLockTimeout(err) ? err : markConnectRefusal(err);
    }
    if (!this.options.typedConnectFaults || err instanceof DatabaseUnavailableError) return err;
    // The pg or network error's own words (the CLI reads its code from the cause, src/cli/failure.ts).
    return new DatabaseUnavailableError(err.message || describeDbError(err), { cause: err });
  }

  /**
   * Runs `fn` with a checked-out client. An `error` event on it while held
   * is recorded (never thrown); the client goes back to the pool destroyed
   * if it broke. `fn` sees the recorded error through `broken()`, and
   * `discard(err)` has the client destroyed on release as if it broke.
   */
  async withClient<T>(
    fn: (client: pg.PoolClient, broken: () => Error | undefined, discard: (err: Error) => void) => Promise<T>,
  ): Promise<T> {
    this.active++;
    try {
      const gate = this.options.beforeCheckout?.();
      if (gate) await gate;
      for (let tries = 1; ; tries++) {
        const held = await this.connect();
        try {
          return await fn(held.client, () => held.broken, (err) => void (held.broken ??= err));
        } catch (err) {
          // Its owner's close cut the connection (close() past its wait): the call was closed, not the
          // database lost, whose error (retryable, blaming the server) it would be.
          if (this.cutting && isTransientDbError(err)) throw new ClientClosedError({ cause: err });
          if (isReadOnlySession(err)) {
            readOnlyRefused(this.pool);
            // An older session may date from a read-only spell that is over: the call runs once more on a
            // new one (the refused statement took no effect). A new session refusing too is the database's answer.
            if (held.reused && tries === 1) continue;
          }
          throw err;
        } finally {
          release(held);
        }
      }
    } finally {
      if (--this.active === 0) for (const done of this.idleWaiters.splice(0)) done();
    }
  }

  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
  query<R extends unknown[] = unknown[]>(config: pg.QueryArrayConfig): Promise<pg.QueryArrayResult<R>>;
  query(textOrConfig: string | pg.QueryArrayConfig, values?: unknown[]): Promise<unknown> {
    return this.withClient((client, broken, discard) =>
      boundedQuery(client, broken, discard, this.boundMs(), this.options, textOrConfig, values),
    );
  }

  /**
   * Runs `fn` on one checked-out connection (a transaction's statements must
   * share one), each of its queries bounded by the timeout like `query`.
   */
  withBoundedClient<T>(fn: (q: Queryable, discard: (err: Error) => void) => Promise<T>): Promise<T> {
    return this.withClient((client, broken, discard) => {
      const q = {
        query: (textOrConfig: string | pg.QueryArrayConfig, values?: unknown[]) =>
          boundedQuery(client, broken, discard, this.boundMs(), this.options, textOrConfig, values),
      } as Queryable;
      return fn(q, discard);
    });
  }
}

/**
 * One query on a held client, with no answer within `timeoutMs`: its socket
 * is destroyed (the query fails at once, the client goes back broken) and
 * the failure is a DatabaseUnavailableError. A write its session refused as
 * read-only (25006) has the client destroyed on release too: the session
 * stays read-only for good, so a pool that lent it out again kept failing
 * every write after the server took writes again. So does a statement
 * PostgreSQL cancelled (57014): the cancelling statement_timeout may be the
 * session's own, taken from the database or role when it connected and kept
 * for its life, so a pool that lent it out again failed every call long
 * after the setting was reset; a fresh connection takes the setting as it is
 * now (after a pg_cancel_backend, the cost is one reconnect). With typed
 * faults (the client's) a read-only refusal is a DatabaseUnavailableError
 * whose cause is pg's error.
 */
async function boundedQuery(
  client: pg.PoolClient,
  broken: () => Error | undefined,
  discard: (err: Error) => void,
  timeoutMs: number,
  typed: Pick<GuardedDbOptions, 'typedConnectFaults' | 'typedRefusals'>,
  textOrConfig: string | pg.QueryArrayConfig,
  values?: unknown[],
): Promise<unknown> {
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    destroySocket(client);
  }, timeoutMs);
  try {
    return await (typeof textOrConfig === 'string' ? client.query(textOrConfig, values) : client.query(textOrConfig));
  } catch (err) {
    if (timedOut) {
      throw new DatabaseUnavailableError(
        `no answer from the database within ${timeoutMs} ms (a server that hangs or cannot be reached, or a statement waiting for a lock another session holds: see pg_stat_activity)`,
        { cause: err },
      );
    }
    const cause = broken();
    if (cause && cause !== err) throw new DatabaseUnavailableError(`the database connection broke: ${cause.message}`, { cause });
    if (isReadOnlySession(err) || isQueryCanceled(err)) discard(err as Error);
    // A write a read-only session refused (a standby after a failover, a database set read-only) is a
    // fault to retry, as a lost connection is: the client's callers get the error they catch for those.
    if (typed.typedConnectFaults && isReadOnlySession(err)) throw new DatabaseUnavailableError(READ_ONLY_REFUSAL, { cause: err });
    if (typed.typedRefusals) {
      if (isQueryCanceled(err)) throw new DatabaseUnavailableError(`${QUERY_CANCELED}: ${describeDbError(err)}`, { cause: err });
      if (sqlStateOf(err) === SQLSTATE.insufficientPrivilege) {
        throw new DatabaseUnavailableError(`the database refused the call: ${describeDbError(err)}; ${operatorHint(err)}`, { cause: err });
      }
    }
    if (typed.typedConnectFaults && lostConnection(err)) {
      discard(err as Error);
      throw new DatabaseUnavailableError(`the database connection broke: ${describeDbError(err)}`, { cause: err });
    }
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** What a statement PostgreSQL cancelled fails with, for callers that get typed refusals (the client's). */
export const QUERY_CANCELED =
  'the database cancelled the statement (a statement_timeout set on the role or the database, or pg_cancel_backend); it took no effect: retry, or raise the timeout';

/** What a write a read-only session refused fails with, for callers that get typed faults (the client's). */
export const READ_ONLY_REFUSAL =
  'the database refused the write: it is read-only (a standby after a failover, or default_transaction_read_only is on); retry shortly';

/** A fault that means the connection itself is gone (not an error PostgreSQL answered about the statement). */
function lostConnection(err: unknown): boolean {
  if (err instanceof DatabaseUnavailableError || !isTransientDbError(err)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return true;
  return isSessionEnded(err);
}

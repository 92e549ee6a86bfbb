// The transaction of a transactional step or a spawn: its own connection,
// the step session bounds (an idle or a stalled transaction is ended by
// PostgreSQL itself), committed or rolled back as the caller says.
//
// Two kinds of database fault, told apart by whether the work began:
// - No connection could be had (a restart, a failover, no free slot):
//   nothing ran, so it is waited out while the job holds its lease, as a
//   fenced write is (context.ts, retried()), instead of failing the attempt
//   (which failed a job of maxAttempts 1 for good on a 1.5 s restart).
// - The connection broke before the handler's own code ran in the
//   transaction (at its opening, or at the step's own first statement; a
//   spawn runs no handler code at all): nothing of the handler's ran, and
//   the step's own record tells a rerun whether an earlier commit landed,
//   so it is run again on a new connection while the job holds its lease,
//   as a failed checkout is. A pooled connection the server ended while it
//   sat idle (a failover, a pg_terminate_backend) breaks at the opening:
//   it failed the attempt, and a job of maxAttempts 1 for good.
// - The connection broke once the handler's code had run in it: the
//   handler's writes rolled back (or, if the commit's answer was lost,
//   committed: the rerun's own first statement finds the step recorded), so
//   it is run again on a new connection too, up to MAX_BODY_RERUNS times
//   in one attempt (a terminated backend, a reset, a restart cost an
//   attempt each, and a job of few attempts failed for good under a storm
//   of them). Past that (a backend an operator keeps ending: a runaway
//   step) it becomes a retryable DatabaseUnavailableError and the attempt
//   fails. A body that broke its own connection by sitting idle past the
//   step's idle_in_transaction_session_timeout (25P03) is not run again:
//   it would do the same; that is a StepIdleTimeoutError naming the limit.
// - A statement of the step's own (its fenced open, its record) was refused
//   for a reason an operator ends (operatorFixable.ts: revoked grants, a
//   dropped function) or because the session is read-only (25006: a
//   standby after a failover, or default_transaction_read_only; the
//   connection is dropped, as such a session stays read-only), marked by
//   `refusedForNow`: the transaction rolled back, so nothing of it took
//   effect; it is run again, like a failed checkout, while the job holds
//   its lease. A refusal of the handler's own statements is the handler's
//   error.
// Once the job is stopped (its timeout, a lost lease, a stop), a step whose
// connection has still not answered ABORT_GRACE_MS later gives it up (its
// socket destroyed: the transaction rolls back, or, had its commit landed,
// the step's record tells the next attempt), so a frozen connection does
// not hold the handler, and its slot, until the socket thaws.
import { destroySocket } from '../db/guardedDb.js';
import { isOperatorFixable } from '../db/operatorFixable.js';
import type pg from 'pg';
import { Backoff, pause } from '../db/retryTransient.js';
import { isReadOnlySession, isSessionEnded, sqlStateOf } from '../db/sqlState.js';
import { isTransientDbError } from '../db/transient.js';
import { DatabaseUnavailableError, StaleLeaseError, StepIdleTimeoutError, ValidationError } from '../errors.js';
import type { ContextDeps } from './contextDeps.js';
import { RefusalWindow } from './refusalWindow.js';
import type { JobAbort } from './jobAbort.js';

/** A failed checkout is tried again after this long, then with backoff up to the cap. */
const CHECKOUT_RETRY_FIRST_MS = 100;
const CHECKOUT_RETRY_MAX_MS = 2_000;
/** How many times a step whose connection broke while its body ran is run again in one attempt. */
const MAX_BODY_RERUNS = 2;
/** How long a step's connection may go on without answering once its job was stopped (under the handler's linger grace). */
const ABORT_GRACE_MS = 150;
/** idle_in_transaction_session_timeout ended the session. */
const IDLE_IN_TRANSACTION_TIMEOUT = '25P03';

/**
 * A statement of the step's own refused for a reason an operator ends, or
 * its connection broken before the handler's code ran: the transaction
 * rolls back and runs again.
 */
class StepStatementRefused extends Error {
  constructor(readonly refusal: unknown) {
    super('a transactional step statement was refused for now', { cause: refusal });
  }
}

/** Marks a refusal of `statement` an operator can end, so runStepTransaction runs the transaction again. */
export function refusedForNow<T>(statement: Promise<T>): Promise<T> {
  return statement.catch((err: unknown) => {
    throw isOperatorFixable(err) || isReadOnlySession(err) ? new StepStatementRefused(err) : err;
  });
}

/**
 * The client a transactional step's body is handed: the step's connection,
 * whose `release()` is refused. The step releases it itself once the
 * transaction ends; released by the body (the habit `pool.connect()`
 * teaches), it went back to the pool mid-transaction, other callers'
 * statements ran in it, and the step's rollback undid their writes
 * (enqueues answered with ids, then lost).
 */
export function stepClient(tx: pg.PoolClient, what: string): pg.PoolClient {
  const release = () => {
    throw Object.assign(
      new ValidationError(`${what}: the body called release() on its client; the step owns the connection and releases it when the transaction ends (do not release it)`),
      { retryable: false },
    );
  };
  return new Proxy(tx, {
    get(target, key) {
      if (key === 'release') return release;
      const v: unknown = Reflect.get(target, key, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

export async function runStepTransaction<T>(
  deps: ContextDeps,
  jobId: string,
  abort: JobAbort,
  what: string,
  /**
   * `txid`: the transaction's id, which tells whether a statement still runs
   * in it. `enterBody()` is called before the handler's own code runs in the
   * transaction; a broken connection before it runs the transaction again.
   */
  fn: (tx: pg.PoolClient, txid: string, enterBody: () => void) => Promise<{ commit: boolean; value: T }>,
): Promise<T> {
  const { db, txIdleTimeoutMs, txStatementTimeoutMs } = deps;
  const backoff = new Backoff({ baseMs: CHECKOUT_RETRY_FIRST_MS, maxMs: CHECKOUT_RETRY_MAX_MS });
  // A refusal an operator ends is run again for one lease window, each reported (refusalWindow.ts).
  const window = new RefusalWindow(deps.refusalWindowMs, deps.writeFaults, jobId);
  let bodyReruns = 0;
  for (;;) {
    let began = false;
    let inBody = false;
    try {
      const value = await db.withClient(async (tx, broken, discard) => {
        began = true;
        const disarm = giveUpOnAbort(tx, abort, discard);
        try {
          const opened = (await tx.query(
            `begin; set local idle_in_transaction_session_timeout = ${Math.round(txIdleTimeoutMs)};` +
              ` set local statement_timeout = ${Math.round(txStatementTimeoutMs)}; select txid_current()::text as txid`,
          )) as unknown as pg.QueryResult<{ txid: string }>[];
          const r = await fn(tx, opened[opened.length - 1]!.rows[0]!.txid, () => void (inBody = true));
          await tx.query(r.commit ? 'commit' : 'rollback');
          return r.value;
        } catch (err) {
          const cause = broken();
          if (!cause) await tx.query('rollback').catch(() => undefined);
          // A read-only session stays read-only: the run again needs a new connection.
          if (err instanceof StepStatementRefused && isReadOnlySession(err.refusal)) discard(err);
          // Before the body: any database fault (nothing of the handler's ran). Once it ran: only the
          // connection itself lost (its error event, or PostgreSQL ending the session); another error the
          // body met (a serialization failure, its own HTTP call's ECONNRESET) is the body's to report.
          const connectionLost = inBody ? cause !== undefined || isSessionEnded(err) : cause !== undefined || (isTransientDbError(err) && !(err instanceof StaleLeaseError));
          if (!connectionLost) throw err;
          const lost = cause ?? (err as Error);
          if (inBody && (sqlStateOf(lost) === IDLE_IN_TRANSACTION_TIMEOUT || sqlStateOf(err) === IDLE_IN_TRANSACTION_TIMEOUT)) {
            throw new StepIdleTimeoutError(jobId, stepName(what), txIdleTimeoutMs, { cause: lost });
          }
          if (!inBody || bodyReruns < MAX_BODY_RERUNS) {
            if (inBody) bodyReruns++;
            discard(lost);
            const whatBecame = inBody ? 'while it ran; it rolled back' : 'before it ran; nothing of it took effect';
            throw new StepStatementRefused(
              new DatabaseUnavailableError(`${what} of job ${jobId}: the database connection broke (${lost.message}) ${whatBecame}`, { cause: lost }),
            );
          }
          throw new DatabaseUnavailableError(
            `${what} of job ${jobId}: the database connection broke (${lost.message}) while it ran, ${MAX_BODY_RERUNS + 1} times in a row; the step rolled back (or, if the last break lost a commit's answer, is recorded: the retry finds it)`,
            { cause: lost },
          );
        } finally {
          disarm();
        }
      });
      // Any handler write that goes through ends the worker's `handler writes` fault (a no-op when none is open).
      deps.writeFaults.ok();
      return value;
    } catch (err) {
      if (err instanceof StepStatementRefused) {
        if (isOperatorFixable(err.refusal) && !window.allows(err.refusal)) throw window.giveUp(err.refusal);
        window.failed(err.refusal);
        if (!abort.aborted) await pause(backoff.next(), abort.signal);
        if (abort.aborted) throw err.refusal;
        continue;
      }
      if (began || !isTransientDbError(err)) throw err;
      window.failed(err);
      if (!abort.aborted) await pause(backoff.next(), abort.signal);
      if (abort.aborted) {
        throw new DatabaseUnavailableError(
          `${what} of job ${jobId}: no database connection could be had (${(err as Error).message}) before the job was stopped; nothing of it ran`,
          { cause: err },
        );
      }
    }
  }
}

/**
 * Once `abort` fires, gives the connection up if the step still holds it
 * ABORT_GRACE_MS later: its statement in flight fails at once. Returns the
 * disarm, called when the step lets go of the connection.
 */
function giveUpOnAbort(tx: pg.PoolClient, abort: JobAbort, discard: (err: Error) => void): () => void {
  const signal = abort.signal;
  let timer: NodeJS.Timeout | undefined;
  const onAbort = () => {
    timer = setTimeout(() => {
      discard(new Error(`the job was stopped and the connection had not answered ${ABORT_GRACE_MS} ms later: given up`));
      destroySocket(tx);
    }, ABORT_GRACE_MS);
  };
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  return () => {
    signal.removeEventListener('abort', onAbort);
    clearTimeout(timer);
  };
}

/** `write` from `transactional step "write"` (the step's name, for its error). */
function stepName(what: string): string {
  return /"(.*)"$/.exec(what)?.[1] ?? what;
}

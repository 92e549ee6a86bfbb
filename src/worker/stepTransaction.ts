// The transaction of a transactional step or a spawn: its own connection,
// the step session bounds (an idle or a stalled transaction is ended by
// PostgreSQL itself), committed or rolled back as the caller says.
//
// Two kinds of database fault, told apart by whether the work began:
// - No connection could be had (a restart, a failover, no free slot):
//   nothing ran, so it is waited out while the job holds its lease, as a
//   fenced write is (context.ts, retried()), instead of failing the attempt
//   (which failed a job of maxAttempts 1 for good on a 1.5 s restart).
// - The connection broke once the transaction had begun: its outcome may be
//   unknown (a commit whose answer was lost), so it is not run again here;
//   it becomes a retryable DatabaseUnavailableError and the job retries.
// - A statement of the step's own (its fenced open, its record) was refused
//   for a reason an operator ends (operatorFixable.ts: revoked grants, a
//   dropped function) or because the session is read-only (25006: a
//   standby after a failover, or default_transaction_read_only; the
//   connection is dropped, as such a session stays read-only), marked by
//   `refusedForNow`: the transaction rolled back, so nothing of it took
//   effect; it is run again, like a failed checkout, while the job holds
//   its lease. A refusal of the handler's own statements is the handler's
//   error.
import { isOperatorFixable } from '../db/operatorFixable.js';
import type pg from 'pg';
import { Backoff, pause } from '../db/retryTransient.js';
import { isReadOnlySession } from '../db/sqlState.js';
import { isTransientDbError } from '../db/transient.js';
import { DatabaseUnavailableError, StaleLeaseError } from '../errors.js';
import type { ContextDeps } from './contextDeps.js';
import type { JobAbort } from './jobAbort.js';

/** A failed checkout is tried again after this long, then with backoff up to the cap. */
const CHECKOUT_RETRY_FIRST_MS = 100;
const CHECKOUT_RETRY_MAX_MS = 2_000;

/** A statement of the step's own refused for a reason an operator ends: the transaction rolls back and runs again. */
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

export async function runStepTransaction<T>(
  deps: ContextDeps,
  jobId: string,
  abort: JobAbort,
  what: string,
  /** `txid`: the transaction's id, which tells whether a statement still runs in it. */
  fn: (tx: pg.PoolClient, txid: string) => Promise<{ commit: boolean; value: T }>,
): Promise<T> {
  const { db, txIdleTimeoutMs, txStatementTimeoutMs } = deps;
  const backoff = new Backoff({ baseMs: CHECKOUT_RETRY_FIRST_MS, maxMs: CHECKOUT_RETRY_MAX_MS });
  for (;;) {
    let began = false;
    try {
      return await db.withClient(async (tx, broken, discard) => {
        began = true;
        try {
          const opened = (await tx.query(
            `begin; set local idle_in_transaction_session_timeout = ${Math.round(txIdleTimeoutMs)};` +
              ` set local statement_timeout = ${Math.round(txStatementTimeoutMs)}; select txid_current()::text as txid`,
          )) as unknown as pg.QueryResult<{ txid: string }>[];
          const r = await fn(tx, opened[opened.length - 1]!.rows[0]!.txid);
          await tx.query(r.commit ? 'commit' : 'rollback');
          return r.value;
        } catch (err) {
          const cause = broken();
          if (!cause) await tx.query('rollback').catch(() => undefined);
          // A read-only session stays read-only: the run again needs a new connection.
          if (err instanceof StepStatementRefused && isReadOnlySession(err.refusal)) discard(err);
          if (cause || (isTransientDbError(err) && !(err instanceof StaleLeaseError))) {
            throw new DatabaseUnavailableError(
              `${what} of job ${jobId}: the database connection broke (${(cause ?? (err as Error)).message}); the step rolled back and the job will retry`,
              { cause: cause ?? err },
            );
          }
          throw err;
        }
      });
    } catch (err) {
      if (err instanceof StepStatementRefused) {
        if (!abort.aborted) await pause(backoff.next(), abort.signal);
        if (abort.aborted) throw err.refusal;
        continue;
      }
      if (began || !isTransientDbError(err)) throw err;
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

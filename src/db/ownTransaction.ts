// Runs a few statements on one connection as one transaction, rolled back
// if any fails. For calls whose answer must describe the state their own
// change left: a job's record read after a cancel or a retry inside the
// transaction that still holds the row's lock, so a concurrent call cannot
// slip between the change and the read.
import type { Queryable } from './queryable.js';

/** `run` inside begin/commit on `conn`; `onRollbackFailed` hears of a rollback that failed (the connection is then unsafe to reuse). */
export async function inOwnTransaction<T>(conn: Queryable, run: (q: Queryable) => Promise<T>, onRollbackFailed?: (err: unknown) => void): Promise<T> {
  await conn.query('begin');
  try {
    const results = await run(conn);
    await conn.query('commit');
    return results;
  } catch (err) {
    await conn.query('rollback').catch((e: unknown) => onRollbackFailed?.(e));
    throw err;
  }
}

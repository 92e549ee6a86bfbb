// A new connection whose set-up statement PostgreSQL cancels (57014: a
// role's statement_timeout short enough to cancel the pool's set-up, or a
// pg_cancel_backend) fails the client's call with DatabaseUnavailableError,
// as the call's own statement cancelled does: it came out as pg's raw
// DatabaseError, about one call in a hundred under a 1 ms statement_timeout.
// A pool that answers the checkout with that error stands for the server.
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { GuardedDb } from '../../src/db/guardedDb.js';
import { DatabaseUnavailableError } from '../../src/errors.js';

function poolAnswering(err: Error): pg.Pool {
  return { connect: (cb: (e: Error | undefined, c: undefined) => void) => void setImmediate(() => cb(err, undefined)) } as unknown as pg.Pool;
}

const cancelled = Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014', severity: 'ERROR' });

describe('a connection whose set-up statement was cancelled', () => {
  it("is the client's typed fault, pg's error its cause", async () => {
    const db = new GuardedDb(poolAnswering(cancelled), { timeoutMs: 1_000, typedConnectFaults: true, typedRefusals: true });
    const err = await db.query('select 1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseUnavailableError);
    expect(err).toMatchObject({ code: 'database_unavailable', retryable: true });
    expect((err as Error).message).toMatch(/^the database cancelled the statement .*: canceling statement due to statement timeout/);
    expect((err as Error).cause).toBe(cancelled);
  });

  it('stays pg’s own error for callers without typed refusals (a worker waits it out as a fault)', async () => {
    const db = new GuardedDb(poolAnswering(cancelled), { timeoutMs: 1_000 });
    expect(await db.query('select 1').catch((e: unknown) => e)).toBe(cancelled);
  });
});

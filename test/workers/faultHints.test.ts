// A worker's log line for a database error it carries on through says what
// to do about it, or what happened: a heartbeat whose function was dropped
// said only "function workhorse.heartbeat_many_v1(...) does not exist
// (42883)", and a claim in flight while `workhorse migrate` reinstalled the
// functions said only PostgreSQL's internal "could not open relation with
// OID 187673 (XX000)". Such a call is also a fault to wait out: it passes
// once the reinstall commits.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { logCarriedOn } from '../../src/carriedOn.js';
import { isTransientDbError } from '../../src/db/transient.js';

const pgError = (message: string, code: string) => Object.assign(new Error(message), { code, severity: 'ERROR' });
const lines: string[] = [];

afterEach(() => {
  vi.restoreAllMocks();
  lines.length = 0;
});

function logged(err: unknown, what?: string): string[] {
  vi.spyOn(console, 'error').mockImplementation((...args) => void lines.push(args.join(' ')));
  logCarriedOn('[workhorse] worker w1:', err, what);
  return lines;
}

describe('a database error a worker carries on through', () => {
  it('names the fix when an operator must act', () => {
    const err = pgError('function workhorse.heartbeat_many_v1(text) does not exist', '42883');
    expect(logged(err, 'heartbeat failed; the leases are held and the beat is tried again sooner')).toEqual([
      '[workhorse] worker w1: heartbeat failed; the leases are held and the beat is tried again sooner: ' +
        'function workhorse.heartbeat_many_v1(text) does not exist (42883); a workhorse function is missing: run `workhorse migrate` to reinstall it',
    ]);
  });

  it('says once what the line already says', () => {
    const err = pgError('function workhorse.complete_many_v1(text) does not exist', '42883');
    const [line] = logged(err, 'settle refused (a workhorse function is missing: run `workhorse migrate` to reinstall it); written again in 100 ms');
    expect(line!.match(/run `workhorse migrate`/g)).toHaveLength(1);
  });

  it('says a call that met a reinstall of the functions was tried again, and waits it out', () => {
    const err = pgError('could not open relation with OID 187673', 'XX000');
    expect(isTransientDbError(err)).toBe(true);
    expect(isTransientDbError(pgError('cache lookup failed for function 16422', 'XX000'))).toBe(true);
    expect(logged(err, 'claim failed; retrying in 100 ms')).toEqual([
      '[workhorse] worker w1: claim failed; retrying in 100 ms: could not open relation with OID 187673 (XX000); ' +
        'the workhorse functions were being reinstalled (a `workhorse migrate` beside running workers); tried again',
    ]);
  });

  it('adds nothing to a fault that explains itself', () => {
    expect(logged(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }), 'heartbeat failed')).toEqual([
      '[workhorse] worker w1: heartbeat failed: connect ECONNREFUSED 127.0.0.1:5432 (ECONNREFUSED)',
    ]);
  });
});

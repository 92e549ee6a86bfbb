// SQLSTATE 42704 (undefined object) names the fix "run `workhorse migrate`"
// only when a workhorse type is what is missing: a connection whose
// `options` set a parameter the server does not know ("unrecognized
// configuration parameter", also 42704) was told to run migrate, even by
// `workhorse migrate` itself.
import { describe, expect, it } from 'vitest';
import { faultHint } from '../../src/db/faultHint.js';
import { isOperatorFixable } from '../../src/db/operatorFixable.js';

const pgError = (message: string, code: string) => Object.assign(new Error(message), { code, severity: 'ERROR' });

describe('42704', () => {
  it('a missing workhorse type: migrate', () => {
    const err = pgError('type "workhorse.claimed_job" does not exist', '42704');
    expect(faultHint(err)).toBe('a workhorse type is missing: run `workhorse migrate` to reinstall it');
    expect(isOperatorFixable(err)).toBe(true);
  });

  it('an unknown setting, or a role: no hint, and not waited out', () => {
    for (const message of ['unrecognized configuration parameter "foo"', 'role "ghost" does not exist']) {
      const err = pgError(message, '42704');
      expect(faultHint(err)).toBeUndefined();
      expect(isOperatorFixable(err)).toBe(false);
    }
  });
});

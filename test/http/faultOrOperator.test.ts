// Which 503 a database refusal answers: a fault that clears on its own (too
// many connections, 53300) is `database_unreachable` with Retry-After,
// whether raw or wrapped in a tick's DatabaseUnavailableError; a refusal
// only an operator ends (grants revoked, 42501) is `database_needs_operator`,
// raw or wrapped. 53300 matched the "out of a resource" class (53) of the
// operator's refusals and read as one once those were asked first.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { isOperatorFixable } from '../../src/db/operatorFixable.js';
import { DatabaseUnavailableError } from '../../src/errors.js';
import { describeError } from '../../src/http/middleware/errorHandler.js';

function pgError(code: string, message: string): pg.DatabaseError {
  const e = new pg.DatabaseError(message, message.length, 'error');
  e.code = code;
  e.severity = 'FATAL';
  return e;
}

const tooMany = () => pgError('53300', 'too many connections for role "wh"');
const revoked = () => pgError('42501', 'permission denied for schema workhorse');
const diskFull = () => pgError('53100', 'could not extend file: No space left on device');

describe('a database refusal over HTTP', () => {
  it('too many connections: database_unreachable, raw or wrapped, and no operator refusal', () => {
    expect(isOperatorFixable(tooMany())).toBe(false);
    for (const err of [tooMany(), new DatabaseUnavailableError("the database refused the tick's work: too many connections", { cause: tooMany() })]) {
      expect(describeError(err)?.body.code).toBe('database_unreachable');
    }
  });

  it('grants revoked or a full disk: database_needs_operator, raw or wrapped in a tick\'s error', () => {
    for (const make of [revoked, diskFull]) {
      expect(isOperatorFixable(make())).toBe(true);
      for (const err of [make(), new DatabaseUnavailableError("the database refused the tick's work", { cause: make() })]) {
        expect(describeError(err)?.body.code).toBe('database_needs_operator');
      }
    }
  });
});

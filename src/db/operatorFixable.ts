// Which refusals an operator can end without a code change, and what to do
// about each. A write the database refuses for one of these reasons (a
// protocol function or table dropped, the runtime role's grants revoked,
// a full disk) will succeed unchanged once the operator acts, so a write
// that is safe to repeat under the fence (a settlement, a step's fenced
// read and record, a transactional step's own statements) waits it out
// while the job holds its lease, as it waits out a connection fault,
// instead of throwing the handler's outcome away at once. Before, one such
// refusal dropped every outcome (three workers emptied a queue into
// `failed` while every handler succeeded) and failed jobs of maxAttempts 1.
//
// Not here, on purpose: data errors (class 22 but an exhausted sequence, constraints in 23, program
// limits in 54, the protocol's own WH4xx refusals) can never succeed as
// written and keep failing fast; a read-only session (25006), too many
// connections (53300) and serialisation conflicts are database faults
// already (transient.ts). Caveat: a handler's own statement refused for
// these reasons is the handler's business; only workhorse's own writes are
// waited out.
import { DatabaseUnavailableError, SchemaVersionError } from '../errors.js';
import { sqlStateOf } from './sqlState.js';

/** SQLSTATE (or class prefix) → what the operator should do. */
const FIXABLE: readonly { code: string; hint: string; message?: RegExp; except?: string }[] = [
  // A protocol function, table, type or the schema was dropped (by hand, a partial restore).
  // Only a workhorse function (not "operator does not exist", nor a function of the handler's own).
  { code: '42883', message: /^function workhorse\./, hint: 'a workhorse function is missing: run `workhorse migrate` to reinstall it' },
  { code: '42P01', hint: 'a workhorse table is missing: restore it (`workhorse migrate` reinstalls the functions, not a dropped table)' },
  // 42704 is any undefined object; only a type is workhorse's to reinstall (not `options=-c foo=bar`'s
  // "unrecognized configuration parameter", nor a role).
  { code: '42704', message: /^type "/, hint: 'a workhorse type is missing: run `workhorse migrate` to reinstall it' },
  { code: '3F000', hint: 'the workhorse schema is missing: restore it, or run `workhorse migrate`' },
  // The login lost its grants (revoked, or its membership in workhorse_runtime).
  {
    code: '42501',
    hint: "the database login lacks a privilege: make it a member of workhorse_runtime (GRANT workhorse_runtime TO <login>), and have the schema's owner give that role its grants (`workhorse migrate` does, or select workhorse.grant_runtime_v1())",
  },
  // The login itself is refused (a password rotated on one side only, LOGIN revoked).
  { code: '28', hint: 'the database refuses this login: fix its credentials' },
  // An id sequence at its maximum: no insert of that table can succeed until it is widened.
  {
    code: '2200H',
    hint: 'a workhorse id sequence reached its maximum value: an operator must widen it (ALTER SEQUENCE ... MAXVALUE) or, once old rows are gone, restart it',
  },
  // Insufficient resources on the server, but 53300 (too many connections): a fault in transient.ts, which
  // clears as connections close (the HTTP API answers it 503 database_unreachable with Retry-After).
  { code: '53', except: '53300', hint: 'the database server is out of a resource (disk, memory, a configured limit): free it' },
];

function entryFor(err: unknown): { code: string; hint: string } | undefined {
  const code = sqlStateOf(err);
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return undefined;
  const message = err instanceof Error ? err.message : '';
  return FIXABLE.find(
    (f) => (f.code.length === 5 ? code === f.code : code.startsWith(f.code)) && code !== f.except && (!f.message || f.message.test(message)),
  );
}

/**
 * A refusal that lasts until an operator acts, and then goes away with no
 * code change: a write safe to repeat is worth repeating while its lease holds.
 */
export function isOperatorFixable(err: unknown): boolean {
  return err instanceof SchemaVersionError || operatorHint(err) !== undefined;
}

/** What the operator should do about `err`, or undefined when it is not operator-fixable. */
export function operatorHint(err: unknown): string | undefined {
  if (err instanceof SchemaVersionError) return err.message;
  // A tick's failure wraps the refusal it failed with (runTick.ts): the hint is its cause's.
  if (err instanceof DatabaseUnavailableError && err.cause !== undefined && !(err.cause instanceof DatabaseUnavailableError)) return operatorHint(err.cause);
  return entryFor(err)?.hint;
}

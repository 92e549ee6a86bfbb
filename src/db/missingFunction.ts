// A protocol call that reaches a workhorse.* function the database does not
// have (SQLSTATE 42883, undefined_function) almost always means the
// database is at another schema version than this code: a deploy that ran
// before `workhorse migrate`, or code rolled back behind a migrated schema.
// PostgreSQL's own "function workhorse.x(...) does not exist" says none of
// that, so every call of `postgresProtocol` goes through
// `withSchemaDiagnosis`: when one fails that way, the schema version is read
// and, when it differs from SCHEMA_VERSION, the call fails with a
// SchemaVersionError naming both versions (HTTP: 503 schema_version).
//
// Only a failed call pays: a call that succeeds gets one promise reaction
// and nothing else; the version is read only after a 42883. Caveats: the
// version is read on the call's own connection, so inside a caller's
// transaction (which the failed statement aborted) it cannot be read and
// the original error stands; so does it when the version matches (a
// genuinely missing function is a broken install, not a version skew).
import { SchemaVersionError } from '../errors.js';
import type { Queryable } from './queryable.js';
import { readSchemaVersion } from './schemaCheck.js';
import { SCHEMA_VERSION } from './schemaVersion.js';
import { SQLSTATE, sqlStateOf } from './sqlState.js';

/** PostgreSQL's message for a call of a workhorse function that does not exist (with these argument types). */
const MISSING_WORKHORSE_FUNCTION = /^function workhorse\.\w+\(.*\) does not exist/;

/** A failure calling a workhorse.* function the database does not have. */
export function isMissingWorkhorseFunction(err: unknown): boolean {
  return sqlStateOf(err) === SQLSTATE.undefinedFunction && err instanceof Error && MISSING_WORKHORSE_FUNCTION.test(err.message);
}

/** The error a failed protocol call should surface: a SchemaVersionError for a missing function on a schema of another version, else `err`. */
export async function diagnoseMissingFunction(db: Queryable, err: unknown): Promise<unknown> {
  if (!isMissingWorkhorseFunction(err)) return err;
  let found: number | null;
  try {
    found = await readSchemaVersion(db);
  } catch {
    return err;
  }
  if (found === SCHEMA_VERSION) return err;
  return new SchemaVersionError(found, SCHEMA_VERSION, { cause: err, detail: (err as Error).message });
}

type ProtocolCall = (db: Queryable, ...rest: never[]) => Promise<unknown>;

/** The same calls, each one's failure passed through diagnoseMissingFunction. Properties that are not functions are kept as they are. */
export function withSchemaDiagnosis<P extends object>(protocol: P): P {
  const wrapped: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(protocol)) {
    if (typeof value !== 'function') {
      wrapped[name] = value;
      continue;
    }
    const call = value as ProtocolCall;
    wrapped[name] = (db: Queryable, ...rest: never[]) =>
      call(db, ...rest).then(undefined, async (err: unknown) => {
        throw await diagnoseMissingFunction(db, err);
      });
  }
  return wrapped as P;
}

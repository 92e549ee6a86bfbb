// A step's result is checked before its record is written: one JSON cannot
// hold (a BigInt, a cycle) or PostgreSQL's jsonb refuses (a NUL or a lone
// surrogate in a string, nesting deeper than MAX_JSON_DEPTH) could never be
// recorded, so every retry would run the step's body again. It fails the job
// at once instead (a ValidationError that is not retried). So does a
// function or a symbol as the result itself (JSON.stringify drops it: it was
// recorded as null, a result lost without a word; a function returned is
// most likely one not called). undefined is recorded as null, as before.
// A record PostgreSQL refuses all the same for its value (over jsonb's 256 MiB)
// fails the job the same way (refusedRecord).
import { ValidationError } from '../errors.js';
import { jsonProblem } from '../storable.js';
import { isProgramLimitExceeded } from '../db/sqlState.js';

export function assertStorableStepResult(what: string, jobId: string, result: unknown): void {
  const reason = unstorableReason(result);
  if (reason === undefined) return;
  const error = new ValidationError(`${what} of job ${jobId} returned a result that is not JSON PostgreSQL can store (${reason}); the job fails without a retry`);
  throw Object.assign(error, { retryable: false });
}

/** Why a step result cannot be recorded as given, or undefined when it can. */
function unstorableReason(result: unknown): string | undefined {
  if (typeof result === 'function' || typeof result === 'symbol') return `a ${typeof result} is not JSON: it would be recorded as null`;
  try {
    const text = JSON.stringify(result) as string | undefined;
    const problem = text === undefined ? undefined : jsonProblem(text);
    return problem ? `${problem.path.length ? `at ${problem.path.join('.')}: ` : ''}it ${problem.message}` : undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/**
 * A step's record PostgreSQL refused for its value (class 54, a program
 * limit: a jsonb string over 256 MiB; class 22, a data exception, which the
 * protocol layer maps to a ValidationError): every retry would run the body
 * again and be refused the same way, so it fails the job at once, as a job
 * result over the limit does.
 */
export function refusedRecord<T>(what: string, jobId: string, record: Promise<T>): Promise<T> {
  return record.catch((err: unknown) => {
    if (!isProgramLimitExceeded(err) && !(err instanceof ValidationError)) throw err;
    const message = err instanceof Error ? err.message : String(err);
    const error = new ValidationError(`${what} of job ${jobId}: PostgreSQL refused to record its result (${message}); the job fails without a retry`);
    throw Object.assign(error, { retryable: false, cause: err });
  });
}

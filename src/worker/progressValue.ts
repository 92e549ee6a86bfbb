// A progress value is checked before it is sent: one JSON cannot hold (a
// BigInt, a cycle) or jsonb refuses (a NUL or a lone surrogate in a string,
// nesting deeper than MAX_JSON_DEPTH) would reach the handler as a bare
// TypeError or as PostgreSQL's message without a path, and be retried; one
// JSON would store as null instead (NaN, an invalid Date: jsonNulls.ts) was
// stored changed.
// So is one larger than the client's maxPayloadBytes: progress is written
// to the job's row, again on every call, and a value of megabytes would
// make each write (and every read of the job) that heavy.
// Each is a ValidationError naming the path instead, sent nowhere and not
// retried: the same value is refused on every attempt, so a handler that
// lets it propagate fails at once.
import { ValidationError } from '../errors.js';
import { silentNull } from '../jsonNulls.js';
import { jsonProblem } from '../storable.js';

function refused(jobId: string, reason: string, path: (string | number)[] = [], what = 'is not JSON PostgreSQL can store'): ValidationError {
  const error = new ValidationError(`progress of job ${jobId} ${what} (${reason}); nothing was written`, [{ path, message: reason }]);
  return Object.assign(error, { retryable: false });
}

/** Throws a ValidationError (retryable: false) for a progress value that can never be stored, or is over `maxBytes` of JSON. */
export function assertStorableProgress(jobId: string, value: unknown, maxBytes: number): void {
  let text: string | undefined;
  try {
    text = JSON.stringify(value === undefined ? null : value) as string | undefined;
  } catch (err) {
    throw refused(jobId, err instanceof Error ? err.message : String(err));
  }
  if (text === undefined) throw refused(jobId, `a ${typeof value} is not JSON`);
  const problem = jsonProblem(text) ?? silentNull(value, text);
  if (problem) throw refused(jobId, `${problem.path.length ? `at ${problem.path.join('.')}: ` : ''}it ${problem.message}`, problem.path);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > maxBytes) throw refused(jobId, `its JSON is ${bytes} bytes, over the client's maxPayloadBytes, ${maxBytes}`, [], 'is too large');
}

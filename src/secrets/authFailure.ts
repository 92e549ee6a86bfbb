// When a database credential read from a secret has stopped working: the
// server refused the login (28P01 invalid_password, 28000
// invalid_authorization_specification, e.g. a revoked or rotated password).
// Seeing one is the cue to read DATABASE_URL's secret again.

/** The variable whose secret a failed login re-reads. */
export const DATABASE_URL_VARIABLE = 'DATABASE_URL';

const AUTH_FAILURE_SQLSTATES = new Set(['28P01', '28000']);

export function isDatabaseAuthFailure(err: unknown, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > 3) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && AUTH_FAILURE_SQLSTATES.has(code)) return true;
  // An error wrapping the driver's, or an AggregateError.
  const errors = (err as { errors?: unknown }).errors;
  const nested = [(err as { cause?: unknown }).cause, ...(Array.isArray(errors) ? errors : [])];
  return nested.some((e) => isDatabaseAuthFailure(e, depth + 1));
}

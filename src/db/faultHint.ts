// What a log line about a database error a worker carries on through adds
// for the operator reading it: what to do when an operator must act
// (operatorFixable.ts: a dropped function, revoked grants), or what
// happened when it passes by itself. A `workhorse migrate` that reinstalls
// the protocol functions beside running workers can make a call in flight
// fail with PostgreSQL's internal "could not open relation with OID ..."
// (XX000), which says nothing an operator can act on; the call is retried.
import { operatorHint } from './operatorFixable.js';

/** PostgreSQL's answers to a call that ran while the functions or types it uses were dropped and created again. */
export const REINSTALLED_MESSAGES = ['could not open relation with oid', 'cache lookup failed for'];

/** A hint for `err`, or undefined when there is nothing to add. */
export function faultHint(err: unknown): string | undefined {
  const hint = operatorHint(err);
  if (hint) return hint;
  const message = err instanceof Error ? err.message.toLowerCase() : '';
  if (REINSTALLED_MESSAGES.some((m) => message.includes(m))) {
    return 'the workhorse functions were being reinstalled (a `workhorse migrate` beside running workers); tried again';
  }
  return undefined;
}

// A payload is stored as JSON, and the worker parses that JSON with the job's
// schema again before the handler sees it (worker/invokeHandler.ts). A schema
// that refuses its own JSON (z.date(), whose Date comes back as an ISO
// string; a transform whose output type the schema does not take) would
// accept the enqueue and then fail the job at its first run, without a
// retry; one that parses its JSON into something else (a transform that is
// not idempotent) would hand every run a different payload than the one
// enqueued. Both are refused here, at enqueue, before anything is written.
import type * as z from 'zod';
import { ValidationError, type ValidationIssue } from '../errors.js';
import { describeIssues, toIssues } from '../validation.js';

export const STORED_PAYLOAD_HINT =
  'a payload is stored as JSON and parsed by the schema again when the job runs, so the schema must accept its own JSON output ' +
  '(use z.coerce.date() or z.iso.datetime() rather than z.date(), and transforms whose output the schema takes back unchanged)';

/** What keeps `encoded` (the stored JSON of a parsed payload) from parsing back to itself: none when it does. */
export function storedPayloadIssues(schema: z.ZodType, encoded: string): ValidationIssue[] {
  let r: ReturnType<z.ZodType['safeParse']>;
  try {
    r = schema.safeParse(JSON.parse(encoded));
  } catch (err) {
    // A transform or preprocess that throws on its own output (JSON.parse of what is already an object).
    return [{ path: [], message: `as stored (JSON): the schema threw ${err instanceof Error ? err.message : String(err)}` }];
  }
  if (!r.success) return toIssues(r.error).map((i) => ({ path: i.path, message: `as stored (JSON): ${i.message}` }));
  let again: string | undefined;
  try {
    again = JSON.stringify(r.data ?? null);
  } catch {
    again = undefined;
  }
  if (again === encoded) return [];
  return [{ path: [], message: 'the schema changes the payload again when it parses its stored JSON, so a worker would see another payload than the one enqueued' }];
}

/** Throws ValidationError naming each issue of storedPayloadIssues, with the fix. */
export function assertStoredPayloadParses(schema: z.ZodType, encoded: string, what: string): void {
  const issues = storedPayloadIssues(schema, encoded);
  if (issues.length > 0) throw new ValidationError(`invalid ${what}: ${describeIssues(issues)}; ${STORED_PAYLOAD_HINT}`, issues);
}

/** storedPayloadIssues of a parsed value; none when it has no JSON at all (the payload checks that store it say so). */
export function storedPayloadIssuesOf(schema: z.ZodType, parsed: unknown): ValidationIssue[] {
  let encoded: string | undefined;
  try {
    encoded = JSON.stringify(parsed ?? null) as string | undefined;
  } catch {
    return [];
  }
  return encoded === undefined ? [] : storedPayloadIssues(schema, encoded);
}

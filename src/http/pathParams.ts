// Path parameters, decoded strictly. Hono decodes a parameter's
// percent-escapes but keeps one it cannot decode as written, so
// `/queues/%ZZ/pause` would address a queue literally named "%ZZ" and
// `POST /signals/%E0%A4%A/paid` would keep a signal under the key
// "%E0%A4%A". A parameter whose escapes are malformed (a "%" not followed by
// two hex digits) or do not decode to UTF-8 (a cut sequence, an encoded
// surrogate such as %ED%A0%80) is a ValidationError (400) naming it, before
// anything reads or writes under it.
import type { Context } from 'hono';
import { ValidationError, type ValidationIssue } from '../errors.js';
import { describeIssues } from '../validation.js';

const MALFORMED = 'malformed percent-encoding: each "%" must start an escape of two hex digits, and the escapes must decode to UTF-8';

function decodes(segment: string): boolean {
  try {
    decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}

/** The matched route's parameters, decoded; throws ValidationError for one whose escapes do not decode. */
export function pathParams(c: Context): Record<string, string> {
  // The path as sent: the URL parser keeps escapes as written.
  const raw = new URL(c.req.url).pathname.split('/');
  const pattern = c.req.routePath.split('/');
  const issues: ValidationIssue[] = [];
  if (raw.length === pattern.length) {
    pattern.forEach((part, i) => {
      if (part.startsWith(':') && !decodes(raw[i]!)) issues.push({ path: [part.slice(1).replace(/\{.*$/, '')], message: MALFORMED });
    });
  } else if (!raw.every(decodes)) {
    issues.push({ path: [], message: MALFORMED });
  }
  if (issues.length > 0) throw new ValidationError(`invalid path: ${describeIssues(issues)}`, issues);
  return c.req.param() as Record<string, string>;
}

// Parses the JSON body the readBody middleware kept. A body declared with a
// Content-Type that is not JSON is a 415 (src/http/mediaType.ts), bad UTF-8 or bad JSON a
// ValidationError (400) like any other bad input; an empty body reads as
// `undefined` so the route's schema decides whether that is allowed. A POST
// route that takes no body reads it too: none or `{}`, anything else is
// refused as it would be on a route with a body, never ignored. No POST
// route takes a query parameter: one is a 400 naming it, before the body is
// read (`POST /jobs/1/cancel?keepChildren=true` would otherwise cancel the
// children it meant to keep).
import type { Context } from 'hono';
import * as z from 'zod';
import { ValidationError } from '../errors.js';
import { parseInput } from '../validation.js';
import type { HttpEnv } from './env.js';
import { requireJsonContentType } from './mediaType.js';
import { noQuery } from './queryParams.js';

const decoder = new TextDecoder('utf-8', { fatal: true });

export function readJson(c: Context<HttpEnv>): unknown {
  parseInput(noQuery, readQuery(c), 'query: this route takes no query parameter (its input is the JSON body)');
  const bytes = c.get('rawBody');
  // A body-less request has nothing to misread, whatever it declares (curl -d '' sends form data).
  if (bytes.length === 0) return undefined;
  requireJsonContentType(c);
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw new ValidationError('request body is not valid UTF-8', [{ path: [], message: 'invalid UTF-8' }]);
  }
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new ValidationError('request body is not valid JSON', [{ path: [], message: (err as Error).message }]);
  }
}

const noBody = z.object({}).strict().optional();

/** The body of a POST route that takes none: no body or `{}`; a key is a 400 naming it, another Content-Type a 415. */
export function readNoBody(c: Context<HttpEnv>): void {
  parseInput(noBody, readJson(c), 'body: this route takes no body (send none, or {})');
}

/**
 * Query parameters as an object. A repeated parameter is a 400 saying so
 * (no route takes a list that way; each schema's "expected string,
 * received array" said it less plainly, and a repeated word of a choice
 * "expected one of" the very word given). It has no prototype, so
 * `?__proto__=x` is an own key the route's strict schema refuses like any
 * unknown parameter (on a plain object it would be ignored).
 */
export function readQuery(c: Context<HttpEnv>): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  for (const [key, values] of Object.entries(c.req.queries())) {
    if (values.length > 1) {
      const name = key.slice(0, 100);
      throw new ValidationError(`query parameter "${name}" is given ${values.length} times: give it once`, [{ path: [name], message: 'given more than once: give it once' }]);
    }
    out[key] = values[0]!;
  }
  // A parameter with an empty name (`?=x`) is dropped by the router's parser: kept as "" so it is refused as unknown too.
  if (/[?&]=/.test(c.req.url)) out[''] = '';
  return out;
}

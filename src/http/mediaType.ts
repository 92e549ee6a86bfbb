// The Content-Type rule for JSON bodies: a route that reads JSON refuses a
// body declared as something else (form data, text) with a 415 instead of
// parsing it by luck. JSON is `application/json` or any `application/*+json`,
// in any case, with any parameters (`; charset=utf-8`). A missing or empty
// Content-Type is accepted: edge functions and some clients send none.
import type { Context } from 'hono';
import { UnsupportedMediaTypeError } from '../errors.js';

const JSON_TYPE = /^application\/(?:json|[^\s/;]+\+json)$/;

/** Whether a Content-Type value names JSON. */
export function isJsonMediaType(contentType: string): boolean {
  return JSON_TYPE.test(contentType.split(';', 1)[0]!.trim().toLowerCase());
}

/** Throws UnsupportedMediaTypeError when the request declares a body type that is not JSON. */
export function requireJsonContentType(c: Context): void {
  const declared = c.req.header('content-type');
  if (declared === undefined || declared.trim() === '') return;
  if (!isJsonMediaType(declared)) throw new UnsupportedMediaTypeError(declared);
}

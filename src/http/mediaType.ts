// The Content-Type rule for JSON bodies: a route that reads JSON refuses a
// body declared as something else (form data, text) with a 415 instead of
// parsing it by luck. JSON is `application/json` or any `application/*+json`,
// in any case, with any parameters; a `charset` parameter must name UTF-8
// (JSON's only encoding, RFC 8259), and a body sent with a Content-Encoding
// (gzip, br) is a 415 too (RFC 7694): it is read as it arrives, never
// decompressed, so either would otherwise fail later as "not valid UTF-8"
// or "not valid JSON". A missing or empty Content-Type is accepted: edge
// functions and some clients send none.
import type { Context } from 'hono';
import { UnsupportedMediaTypeError } from '../errors.js';

const JSON_TYPE = /^application\/(?:json|[^\s/;]+\+json)$/;
const UTF8 = /^"?utf-?8"?$/;

/** Whether a Content-Type value names JSON. */
export function isJsonMediaType(contentType: string): boolean {
  return JSON_TYPE.test(contentType.split(';', 1)[0]!.trim().toLowerCase());
}

/** Every charset parameter of a Content-Type value, lower-cased (one given twice counts as what each says). */
function charsetsOf(contentType: string): string[] {
  const out: string[] = [];
  for (const param of contentType.split(';').slice(1)) {
    const eq = param.indexOf('=');
    if (eq > 0 && param.slice(0, eq).trim().toLowerCase() === 'charset') out.push(param.slice(eq + 1).trim().toLowerCase());
  }
  return out;
}

/** Throws UnsupportedMediaTypeError when the request declares a body type, charset or coding that is not plain UTF-8 JSON. */
export function requireJsonContentType(c: Context): void {
  const encoding = c.req.header('content-encoding')?.trim().toLowerCase();
  if (encoding && encoding !== 'identity') {
    throw new UnsupportedMediaTypeError(
      c.req.header('content-type') ?? '',
      `request body must not be compressed: send it with no Content-Encoding (got ${JSON.stringify(encoding.slice(0, 100))})`,
    );
  }
  const declared = c.req.header('content-type');
  if (declared === undefined || declared.trim() === '') return;
  if (!isJsonMediaType(declared)) throw new UnsupportedMediaTypeError(declared);
  if (!charsetsOf(declared).every((charset) => UTF8.test(charset))) {
    throw new UnsupportedMediaTypeError(declared, `request body must be JSON in UTF-8: send "Content-Type: application/json" with no charset or charset=utf-8 (got ${JSON.stringify(declared.slice(0, 100))})`);
  }
}

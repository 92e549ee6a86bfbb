// What PostgreSQL can store, checked before any SQL runs so bad input is a
// ValidationError naming its field instead of a database error: text without
// NUL characters or lone UTF-16 surrogates (PostgreSQL refuses the first; the
// driver silently replaces the second, so two different keys could collide),
// JSON without them either and nested at most MAX_JSON_DEPTH levels, dates
// inside the years 1-9999, and bigint ids. The same rules guard the client
// and the HTTP API.
import * as z from 'zod';
import type { ValidationIssue } from './errors.js';

/** Deepest nesting of arrays and objects a JSON payload may have. */
export const MAX_JSON_DEPTH = 512;

/** The largest value of a PostgreSQL bigint (2^63 - 1). */
export const MAX_BIGINT = 9_223_372_036_854_775_807n;

const NUL_MESSAGE = 'must not contain a NUL character (\\u0000)';
const SURROGATE_MESSAGE = 'must not contain a lone UTF-16 surrogate (\\ud800-\\udfff without its pair)';

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why PostgreSQL cannot store this string as text, or undefined when it can. */
export function textProblem(s: string): string | undefined {
  if (s.includes('\u0000')) return NUL_MESSAGE;
  if (LONE_SURROGATE.test(s)) return SURROGATE_MESSAGE;
  return undefined;
}

/** A string schema that also refuses what PostgreSQL cannot store as text. */
export function storableText(schema: z.ZodString): z.ZodString {
  return schema.superRefine((s, ctx) => {
    const problem = textProblem(s);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
}

/** Years PostgreSQL's timestamptz accepts in ISO 8601 without extended years. */
const EARLIEST = Date.parse('0001-01-01T00:00:00.000Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

/** A valid Date PostgreSQL can store: the years 1 to 9999 (UTC). */
/** Why a value is not a usable Date, naming the usual slip (a string or an epoch number where a Date belongs). */
export function dateProblem(input: unknown): string {
  if (typeof input === 'string') return 'must be a Date, not a string (pass new Date(text))';
  if (typeof input === 'number') return 'must be a Date, not a number (pass new Date(ms))';
  if (input instanceof Date) return 'must be a valid date, not an Invalid Date';
  return 'must be a Date';
}

export const storableDateSchema = z
  .date({ error: (iss) => dateProblem(iss.input) })
  .refine((d) => d.getTime() >= EARLIEST && d.getTime() <= LATEST, 'must be between the years 0001 and 9999');

const POSITIVE_DIGITS = /^[1-9][0-9]*$/;

/** True for anything but digits over the bigint range (the regex reports other shapes). */
function fitsBigint(s: string): boolean {
  return !POSITIVE_DIGITS.test(s) || (s.length <= 19 && BigInt(s) <= MAX_BIGINT);
}

/** A positive bigint id in decimal, as the database hands it out: 1 to 2^63-1. */
export function bigintIdString(what: string): z.ZodType<string, string> {
  return z
    .string()
    .regex(POSITIVE_DIGITS, `${what} is a positive integer`)
    .refine(fitsBigint, `${what} is at most 2^63-1 (${MAX_BIGINT})`);
}

/**
 * Scans JSON text (as JSON.stringify wrote it) for what PostgreSQL's jsonb
 * refuses: a \u0000 escape, an escaped lone surrogate, or nesting deeper than
 * MAX_JSON_DEPTH. JSON.stringify writes NUL and lone surrogates only as
 * escapes, so one pass over the text finds them. Returns a problem with the
 * path to its value (found by walking the parsed value) or undefined.
 */
export function jsonProblem(encoded: string): ValidationIssue | undefined {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < encoded.length; i++) {
    const ch = encoded.charCodeAt(i);
    if (inString) {
      if (ch === 0x22 /* " */) inString = false;
      else if (ch === 0x5c /* \ */) {
        if (encoded.charCodeAt(i + 1) === 0x75 /* u */) {
          const hex = encoded.slice(i + 2, i + 6).toLowerCase();
          if (hex === '0000') return badString(encoded, NUL_MESSAGE);
          if (hex >= 'd800' && hex <= 'dfff') return badString(encoded, SURROGATE_MESSAGE);
        }
        i++;
      }
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x5b /* [ */ || ch === 0x7b /* { */) {
      if (++depth > MAX_JSON_DEPTH) return { path: [], message: `must not nest deeper than ${MAX_JSON_DEPTH} levels` };
    } else if (ch === 0x5d || ch === 0x7d) depth--;
  }
  return undefined;
}

/**
 * The first string (value or key, in the order JSON.stringify wrote them)
 * PostgreSQL cannot store: its path and its own problem. Keys are visited
 * where they stand, before their values, so the path and the message
 * describe the same string (a NUL in a later key was named with an earlier
 * key's surrogate). `escaped`: the problem of the escape that was found.
 */
function badString(encoded: string, escaped: string): ValidationIssue {
  type Item = { value: unknown; path: (string | number)[]; key?: string };
  const stack: Item[] = [{ value: JSON.parse(encoded) as unknown, path: [] }];
  while (stack.length > 0) {
    const { value, path, key } = stack.pop()!;
    if (key !== undefined) {
      const problem = textProblem(key);
      if (problem) return { path, message: problem };
    } else if (typeof value === 'string') {
      const problem = textProblem(value);
      if (problem) return { path, message: problem };
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: [...path, i] });
    } else if (typeof value === 'object' && value !== null) {
      for (const [k, v] of Object.entries(value).reverse()) {
        stack.push({ value: v, path: [...path, k] });
        stack.push({ value: undefined, path: [...path, k], key: k });
      }
    }
  }
  return { path: [], message: escaped };
}

// Turns zod results into workhorse's typed errors, so every boundary answers
// bad input the same way: a ValidationError (or ConfigError) naming each
// offending path.
import * as z from 'zod';
// The class itself, not z.core: a reference to the z.core namespace keeps
// all of zod's core (locales, JSON Schema) in every bundle.
import { $ZodAsyncError } from 'zod/v4/core';
import { ConfigError, ValidationError, type ValidationIssue } from './errors.js';

export function toIssues(error: z.ZodError): ValidationIssue[] {
  return tightestBounds(error.issues).flatMap((i) => unionIssues(i) ?? [{ path: pathOf(i.path), message: i.message }]);
}

/**
 * A number past two upper bounds (an integer's safe range and the field's
 * own maximum: `delayMs: 1e20`) fails both, and the message said both.
 * Of the bounds one value broke on one side, only the tightest is kept.
 */
function tightestBounds(issues: z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  const kept = new Map<string, z.core.$ZodIssue>();
  const key = (i: z.core.$ZodIssue) => `${i.code}\u0000${pathOf(i.path).join('\u0000')}`;
  const bound = (i: z.core.$ZodIssue) => Number(i.code === 'too_big' ? i.maximum : i.code === 'too_small' ? i.minimum : Number.NaN);
  for (const i of issues) {
    if (i.code !== 'too_big' && i.code !== 'too_small') continue;
    const k = key(i);
    const other = kept.get(k);
    // On a tie the later check wins: a bound the schema states (with its own message) follows the integer's built-in one.
    if (!other || (i.code === 'too_big' ? bound(i) <= bound(other) : bound(i) >= bound(other))) kept.set(k, i);
  }
  return issues.filter((i) => (i.code !== 'too_big' && i.code !== 'too_small') || kept.get(key(i)) === i);
}

const pathOf = (path: PropertyKey[]): (string | number)[] => path.map((p) => (typeof p === 'symbol' ? String(p) : p));

/**
 * A value no option of a union takes is "Invalid input" to zod. When one
 * option got past the value's shape (its issues are all inside the value:
 * `{ max: 1.5 }` for `false | { max: int }`), its issues say what is wrong;
 * otherwise the message lists what each option expected.
 */
function unionIssues(i: z.core.$ZodIssue): ValidationIssue[] | undefined {
  // A union given its own message keeps it.
  if (i.code !== 'invalid_union' || i.message !== 'Invalid input' || !Array.isArray(i.errors) || i.errors.length === 0) return undefined;
  const inside = i.errors.filter((branch) => branch.length > 0 && branch.every((b) => b.path.length > 0));
  if (inside.length === 1) return inside[0]!.map((b) => ({ path: pathOf([...i.path, ...b.path]), message: b.message }));
  const expected = i.errors.flatMap((branch) => (branch.length === 1 && branch[0]!.path.length === 0 ? [branch[0]!.message.replace(/^Invalid input: /, '')] : []));
  if (expected.length !== i.errors.length) return undefined;
  return [{ path: pathOf(i.path), message: `Invalid input: ${[...new Set(expected)].join(', or ')}` }];
}

/** Issues as one line of text: `path: message; ...` (a stored error keeps its message, not its issues). */
export function describeIssues(issues: ValidationIssue[]): string {
  return issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`).join('; ');
}

/** Parses input at a boundary; throws ValidationError naming every issue. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  return parseField(schema, value, [], what);
}

/**
 * schema.safeParse, except that a schema safeParse cannot run (one with an
 * async refine or transform: zod throws "Encountered Promise during
 * synchronous parse") is a ConfigError naming `what`, retryable false:
 * workhorse parses synchronously, so every parse with it would fail alike.
 */
export function safeParseSync<S extends z.ZodType>(schema: S, value: unknown, what: string): z.ZodSafeParseResult<z.output<S>> {
  try {
    return schema.safeParse(value) as z.ZodSafeParseResult<z.output<S>>;
  } catch (err) {
    if (!(err instanceof $ZodAsyncError)) {
      const message = parseThrew(err);
      throw Object.assign(new ValidationError(`invalid ${what}: ${message}`, [{ path: [], message }], { cause: err }), { retryable: false });
    }
    const message = 'the schema is asynchronous (an async refine or transform), and workhorse parses synchronously: make it synchronous';
    throw Object.assign(new ConfigError(`cannot parse ${what}: ${message}`, [{ path: [], message }], { cause: err }), { retryable: false });
  }
}

/**
 * `read()`, for a value read straight from a caller's argument (a property,
 * an array's items): a getter or proxy trap that throws is a
 * ValidationError at `path`, not the caller's raw error.
 */
export function readArgument<T>(read: () => T, path: (string | number)[], what: string): T {
  try {
    return read();
  } catch (err) {
    const message = parseThrew(err);
    throw new ValidationError(`invalid ${what}: ${path.length ? `${path.join('.')}: ` : ''}${message}`, [{ path, message }], { cause: err });
  }
}

/**
 * What a parse that threw (rather than found issues) says: a getter or a
 * proxy of the value threw when it was read, or the schema's own code did
 * (a refine, transform or preprocess).
 */
function parseThrew(err: unknown): string {
  const why = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return `reading it threw (${why}): a getter or proxy in the value, or the schema's own refine, transform or preprocess`;
}

/** Parses one argument of a call; each issue's path starts with the argument's name (`field`). */
export function parseField<S extends z.ZodType>(schema: S, value: unknown, field: string | (string | number)[], what: string): z.output<S> {
  const r = safeParseSync(schema, value, what);
  if (r.success) return r.data;
  const prefix = typeof field === 'string' ? [field] : field;
  const issues = toIssues(r.error).map((i) => ({ path: [...prefix, ...i.path], message: i.message }));
  throw new ValidationError(`invalid ${what}: ${describeIssues(issues)}`, issues);
}

/** Parses configuration once at start-up; throws ConfigError. */
export function parseConfig<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  let r: z.ZodSafeParseResult<z.output<S>>;
  try {
    r = schema.safeParse(value) as z.ZodSafeParseResult<z.output<S>>;
  } catch (err) {
    const message = parseThrew(err);
    throw new ConfigError(`invalid ${what}: ${message}`, [{ path: [], message }], { cause: err });
  }
  if (r.success) return r.data;
  const issues = toIssues(r.error);
  throw new ConfigError(`invalid ${what}: ${describeIssues(issues)}`, issues);
}

/**
 * ` "email.send"`: a definition's name for its error's subject, or nothing
 * when the field is not a non-empty string (or reading it throws: a proxy,
 * a getter; the parse then reports it).
 */
export function quotedField(input: unknown, field: string): string {
  try {
    const value = (input as Record<string, unknown> | null | undefined)?.[field];
    return typeof value === 'string' && value !== '' ? ` "${value}"` : '';
  } catch {
    return '';
  }
}

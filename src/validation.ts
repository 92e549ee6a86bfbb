// Turns zod results into workhorse's typed errors, so every boundary answers
// bad input the same way: a ValidationError (or ConfigError) naming each
// offending path.
import * as z from 'zod';
// The class itself, not z.core: a reference to the z.core namespace keeps
// all of zod's core (locales, JSON Schema) in every bundle.
import { $ZodAsyncError } from 'zod/v4/core';
import { ConfigError, ValidationError, type ValidationIssue } from './errors.js';

export function toIssues(error: z.ZodError): ValidationIssue[] {
  return error.issues.map((i) => ({
    path: i.path.map((p) => (typeof p === 'symbol' ? String(p) : p)),
    message: i.message,
  }));
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
    if (!(err instanceof $ZodAsyncError)) throw err;
    const message = 'the schema is asynchronous (an async refine or transform), and workhorse parses synchronously: make it synchronous';
    throw Object.assign(new ConfigError(`cannot parse ${what}: ${message}`, [{ path: [], message }], { cause: err }), { retryable: false });
  }
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
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issues = toIssues(r.error);
  throw new ConfigError(`invalid ${what}: ${describeIssues(issues)}`, issues);
}

// Turns zod results into workhorse's typed errors, so every boundary answers
// bad input the same way: a ValidationError (or ConfigError) naming each
// offending path.
import type { z } from 'zod';
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

/** Parses one argument of a call; each issue's path starts with the argument's name (`field`). */
export function parseField<S extends z.ZodType>(schema: S, value: unknown, field: string | (string | number)[], what: string): z.output<S> {
  const r = schema.safeParse(value);
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

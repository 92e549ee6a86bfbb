// The shapes of names that reach the database: namespaces (which also form
// a NOTIFY channel, so they are short), queues, job types, keys, worker ids,
// durable wait and step names, and job ids. Free-form names are
// `storableName`s: they refuse what PostgreSQL cannot store
// (src/storable.ts) before any SQL runs; ids fit a bigint.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import * as z from 'zod';
import { bigintIdString, storableText } from './storable.js';

export const namespaceSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,40}$/, 'a namespace is 1-40 characters of letters, digits, "_", "." or "-"');
/**
 * Names the HTTP API and the dashboard take in a path (POST
 * /signals/:key/:name, /jobs/:id/signals/:name, /jobs/:id/decisions/:name,
 * /queues/:name/pause, /workers/:id/pause) cannot be "." or "..":
 * a URL resolves those segments away, even percent-encoded (/signals/../paid
 * is /paid), so such a wait could never be signalled or decided over HTTP, nor such a
 * queue or worker paused.
 */
function notDotSegment(schema: z.ZodString): z.ZodString {
  return schema.refine((s) => s !== '.' && s !== '..', 'must not be "." or "..": a URL path cannot carry it (it resolves away)');
}

/** The queue built-in slots (sys.*) enqueue on. */
export const SYSTEM_QUEUE = 'sys';

export const queueNameSchema = notDotSegment(
  z.string().regex(/^[A-Za-z0-9_.:-]{1,100}$/, 'a queue name is 1-100 characters of letters, digits, "_", ".", ":" or "-"'),
);
export const jobTypeSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.:/-]{1,128}$/, 'a job type is 1-128 characters of letters, digits, "_", ".", ":", "/" or "-"');

/** A free-form name or key of 1 to `max` characters that PostgreSQL can store as text. */
export function storableName(max: number): z.ZodString {
  return storableText(z.string().min(1).max(max));
}

export const keySchema = storableName(512);
export const workerIdSchema = notDotSegment(storableName(200));

/** A durable wait's name (sleep, signal, decision, spawn, join), as a handler and a sender give it. */
export const waitNameSchema = notDotSegment(storableName(200));
/** The key a signal wait chooses and a signal by key names. */
export const signalKeySchema = notDotSegment(storableName(512));
/**
 * The longest step name, in bytes of UTF-8. A step is keyed by (job id,
 * name) in a b-tree, whose rows hold at most 2704 bytes: a longer name that
 * does not compress was refused by the database only when the step was
 * recorded, after its body had run, and the job was retried to run it again.
 */
export const MAX_STEP_NAME_BYTES = 2600;
/** A step's name: a string PostgreSQL can store and index. */
export const stepNameSchema = storableText(z.string().min(1, 'a step name must not be empty')).refine(
  (s) => Buffer.byteLength(s, 'utf8') <= MAX_STEP_NAME_BYTES,
  `a step name is at most ${MAX_STEP_NAME_BYTES} bytes of UTF-8 (it keys the step's record)`,
);
/** A handler's job type given by name: any string PostgreSQL can store (jobs enqueued by other SDKs need not follow jobTypeSchema). */
export const handlerTypeSchema = storableText(z.string().min(1));

/** A job id as the API hands it out: a decimal string from 1 to 2^63-1. */
export const jobIdStringSchema = bigintIdString('a job id');
/** A job id as callers pass it: that string, or a safe integer. */
export const jobIdSchema = z.union(
  [jobIdStringSchema, z.number().int().positive().max(Number.MAX_SAFE_INTEGER, 'a numeric job id must be a safe integer; pass larger ids as strings')],
  { error: 'a job id is a positive integer: a string of digits ("42") or a safe integer' },
);

/** The default worker id embeds host and pid, plus a few random bytes per incarnation. */
export function defaultWorkerId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

/**
 * What Lambda's Invoke takes as FunctionName: a name, a partial ARN
 * (account:function:name) or a full ARN, each with an optional version or
 * alias (Lambda's own pattern for it). A lambdaSink's target, a tick's
 * fan-out function. Lambda's length limit (170) is the whole ARN's; the
 * function's name itself is at most 64 characters however it is given, and
 * a longer one passed the pattern only to be refused at every invocation.
 */
const LAMBDA_FUNCTION_NAME =
  /^(arn:(aws[a-zA-Z-]*)?:lambda:)?([a-z]{2}((-gov)|(-iso([a-z]?)))?-[a-z]+-\d{1}:)?(\d{12}:)?(function:)?(?<name>[a-zA-Z0-9-_.]+)(:(\$LATEST|[a-zA-Z0-9-_]+))?$/;
const LAMBDA_NAME_MAX = 64;

export function lambdaFunctionNameSchema(field: string) {
  return z
    .string()
    .min(1)
    .max(170)
    .regex(LAMBDA_FUNCTION_NAME, `${field} must be a Lambda function name (letters, digits, "-" and "_"), a partial ARN or an ARN, with an optional :version or :alias`)
    .refine(
      (s) => (LAMBDA_FUNCTION_NAME.exec(s)?.groups?.name?.length ?? 0) <= LAMBDA_NAME_MAX,
      `${field} names a function longer than Lambda's limit of ${LAMBDA_NAME_MAX} characters (the name itself, whether given alone, with a :version or :alias, or in an ARN)`,
    );
}

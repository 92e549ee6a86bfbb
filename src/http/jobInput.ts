// The body of POST /jobs: one job `{ type, payload, ...options }` or a batch
// `{ jobs: [...] }`. Options are the client's enqueue options (camelCase, e.g.
// `dedupeKey` for the dedupe_key column), with `runAt` as an ISO 8601 string.
// Payloads are checked against the registered job definitions here so every
// issue carries its full path in the body (`jobs.2.payload.to`), including
// what jsonb cannot store (a NUL deep in the payload); the client validates
// again before the single insert, so a bad item writes nothing.
import * as z from 'zod';
import type { Client, EnqueueManyItem } from '../client/client.js';
import type { JobDefinition } from '../client/defineJob.js';
import { encodePayload, enqueueOptionsSchema, ONE_START_TIME, oneStartTime, type EnqueueOptions } from '../client/enqueueInput.js';
import { storedPayloadIssuesOf } from '../client/storedPayloadCheck.js';
import { UnknownJobTypeError, ValidationError, type ValidationIssue } from '../errors.js';
import { jobTypeSchema } from '../names.js';
import { protoKeyIssue } from '../protoKeys.js';
import { storableDateSchema } from '../storable.js';
import { parseInput, safeParseSync, toIssues } from '../validation.js';

/** Most jobs one POST /jobs may carry. */
export const MAX_BATCH = 1000;

const itemSchema = z
  .object({
    ...enqueueOptionsSchema.shape,
    type: jobTypeSchema,
    // Required, but checked with the payload's own issues (payloadIssues), so its message can say so.
    payload: z.unknown().optional(),
    runAt: z.iso
      .datetime({ offset: true, message: 'expected an ISO 8601 date-time with a time zone, of a date and time that exist (2030-01-31T09:00:00Z)' })
      .transform((s) => new Date(s))
      .pipe(storableDateSchema)
      .optional(),
  })
  .strict()
  .refine(oneStartTime, ONE_START_TIME);

const batchSchema = z.object({ jobs: z.array(itemSchema).min(1).max(MAX_BATCH) }).strict();

export interface ParsedEnqueue {
  batch: boolean;
  items: EnqueueManyItem[];
}

type Item = z.output<typeof itemSchema>;

function isBatch(body: unknown): boolean {
  return typeof body === 'object' && body !== null && !Array.isArray(body) && 'jobs' in body;
}

/**
 * What the database could not store of a valid payload (a PayloadTooLargeError still throws: 413),
 * or what its schema would not read back from the stored JSON as the worker does (storedPayloadCheck.ts).
 */
function storageIssues(client: Client, subject: string, schema: z.ZodType, payload: unknown): ValidationIssue[] {
  try {
    encodePayload(subject, payload, client.maxPayloadBytes);
  } catch (err) {
    if (err instanceof ValidationError) return err.issues;
    throw err;
  }
  return storedPayloadIssuesOf(schema, payload);
}

/**
 * What is wrong with one item's payload: a `__proto__` key, its schema's
 * issues, or what the database could not store. `at`: the item's place in a
 * batch (`jobs.2`), named by a PayloadTooLargeError too.
 */
function payloadIssues(client: Client, def: JobDefinition, type: string, payload: unknown, at: string): ValidationIssue[] {
  // JSON has no undefined: a missing payload is a mistake, not "none" (zod said "expected nonoptional").
  if (payload === undefined) return [{ path: [], message: 'required: give the job its payload (null when it takes none)' }];
  const proto = protoKeyIssue(payload);
  if (proto) return [proto];
  try {
    const r = safeParseSync(def.schema, payload, `payload for job type "${type}"`);
    return r.success ? storageIssues(client, `job type "${type}"${at ? ` (${at})` : ''}`, def.schema, r.data) : toIssues(r.error);
  } catch (err) {
    // The schema's own code threw (a refine, a preprocess): an issue of this payload, at its path in the body like any other.
    if (err instanceof ValidationError) return err.issues;
    throw err;
  }
}

/**
 * The definition of a type POST /jobs names. The server's job types are its
 * app module's, so an unknown one says so (the caller cannot fix it with
 * createClient, which is what the client's own error suggests).
 */
function definitionOf(client: Client, type: string, where: string) {
  if (client.hasDefinition(type)) return client.definition(type);
  const fix =
    client.definedTypes.length === 0
      ? 'this server has no job types: start it with the app module that defines them (workhorse serve --app module.js, or WORKHORSE_APP)'
      : 'this server accepts the job types of its app module (workhorse serve --app, or WORKHORSE_APP), and that module does not define it';
  throw new UnknownJobTypeError(type, where ? `${fix} (at ${where})` : fix);
}

export function parseEnqueueBody(client: Client, body: unknown): ParsedEnqueue {
  if (body === undefined) throw new ValidationError('request body is required', [{ path: [], message: 'expected a JSON object' }]);
  const batch = isBatch(body);
  const parsed: Item[] = batch ? parseInput(batchSchema, body, 'enqueue request').jobs : [parseInput(itemSchema, body, 'enqueue request')];
  const issues: ValidationIssue[] = [];
  const items = parsed.map((item, i): EnqueueManyItem => {
    const def = definitionOf(client, item.type, batch ? `jobs.${i}.type` : '');
    const prefix = batch ? ['jobs', i, 'payload'] : ['payload'];
    issues.push(...payloadIssues(client, def, item.type, item.payload, batch ? `jobs.${i}` : '').map((x) => ({ ...x, path: [...prefix, ...x.path] })));
    const { type, payload, ...options } = item;
    // itemSchema's refinement (oneStartTime) has refused runAt with delayMs.
    return { job: type, payload, options: options as EnqueueOptions };
  });
  if (issues.length > 0) {
    const where = issues.map((x) => `${x.path.join('.')}: ${x.message}`).join('; ');
    throw new ValidationError(`invalid payload: ${where}`, issues);
  }
  return { batch, items };
}

// Turns (definition, payload, options) into the row enqueue_many_v1 inserts.
// Everything is validated here, before any SQL runs: the payload against the
// job's zod schema, the options, and the encoded payload's size and content
// (what jsonb cannot store: NUL, lone surrogates, runaway nesting).
import * as z from 'zod';
import { PayloadTooLargeError, ValidationError } from '../errors.js';
import type { JobInsert } from '../db/protocol.js';
import { keySchema, queueNameSchema } from '../names.js';
import { silentNull } from '../jsonNulls.js';
import { protoKeyIssue } from '../protoKeys.js';
import { jsonProblem, storableDateSchema } from '../storable.js';
import { parseInput } from '../validation.js';
import { boundedInt } from '../boundedInt.js';
import type { AtMostOne } from '../exclusiveOptions.js';
import { backoffOverrideSchema, type JobDefinition } from './defineJob.js';
import { assertStoredPayloadParses } from './storedPayloadCheck.js';

/** Payloads are limited to this many bytes of JSON unless the client says otherwise. */
export const DEFAULT_MAX_PAYLOAD_BYTES = 256 * 1024;

/** The one enqueue-time rule: a job starts at runAt, or delayMs after the database clock's now, never both. */
export function oneStartTime(o: { runAt?: Date | undefined; delayMs?: number | undefined }): boolean {
  return !(o.runAt && o.delayMs !== undefined);
}
export const ONE_START_TIME = { message: 'give runAt or delayMs, not both', path: ['delayMs'] };

/**
 * The dedupe keys recurring slots give the jobs of their cadences
 * (`slot:<name>:<cadence>`, sql/protocol/schedules.sql). A job enqueued with
 * one would take that cadence's place: the slot's own job would never be
 * created. So no caller's key may start so.
 */
const SLOT_KEY_PREFIX = 'slot:';
const dedupeKeySchema = keySchema.refine(
  (k) => !k.startsWith(SLOT_KEY_PREFIX),
  `must not start with "${SLOT_KEY_PREFIX}": recurring schedules key the job of each cadence so (slot:<name>:<cadence>), and a job holding such a key would take that cadence's place`,
);

/**
 * A per-enqueue backoff: each field given replaces the definition's, the
 * others keep the definition's (not the library's defaults, which
 * backoffSchema fills in: `{ maxMs: 10000 }` on a fixed 5 s policy made it
 * exponential from 1 s).
 */
function withBackoffOverride(def: JobDefinition, o: z.output<typeof backoffOverrideSchema> | undefined): JobDefinition['retry']['backoff'] {
  const b = def.retry.backoff;
  if (!o) return b;
  const merged = { kind: o.kind ?? b.kind, baseMs: o.baseMs ?? b.baseMs, maxMs: o.maxMs ?? b.maxMs };
  if (merged.baseMs > merged.maxMs) {
    const message = `baseMs (${merged.baseMs}${o.baseMs === undefined ? ", the definition's" : ''}) must not exceed maxMs (${merged.maxMs}${o.maxMs === undefined ? ", the definition's" : ''})`;
    throw new ValidationError(`invalid options for job type "${def.type}": backoff.baseMs: ${message}`, [{ path: ['backoff', 'baseMs'], message }]);
  }
  return merged;
}

export const enqueueOptionsSchema = z
  .object({
    queue: queueNameSchema.optional(),
    /** Lower runs first. */
    priority: boundedInt(-32768, 32767).optional(),
    runAt: storableDateSchema.optional(),
    delayMs: boundedInt(0, 10 * 365 * 86_400_000, { min: 'delayMs must not be negative' }).optional(),
    maxAttempts: boundedInt(1, 1000).optional(),
    // The fields given override the definition's; the rest stay the definition's (buildJobInsert).
    backoff: backoffOverrideSchema.optional(),
    concurrencyKey: keySchema.optional(),
    dedupeKey: dedupeKeySchema.optional(),
    timeoutMs: boundedInt(1, 2_147_483_647).optional(),
  })
  .strict()
  .refine(oneStartTime, ONE_START_TIME);

type EnqueueOptionsInput = z.input<typeof enqueueOptionsSchema>;
/**
 * Enqueue options. A job starts at `runAt` or `delayMs` after the database
 * clock's now, never both: the type says so as the runtime check does.
 */
export type EnqueueOptions = AtMostOne<EnqueueOptionsInput, 'runAt', 'delayMs'>;

/**
 * A built row's payload size in bytes as JSON, measured while it was
 * checked, so a large enqueueMany is cut into statements without encoding
 * every payload again (enqueueChunks.ts). A symbol key: JSON.stringify
 * leaves it out of what is sent.
 */
export const PAYLOAD_BYTES = Symbol('workhorse.payloadBytes');
export type SizedJobInsert = JobInsert & { [PAYLOAD_BYTES]: number };

export function buildJobInsert(
  def: JobDefinition,
  payload: unknown,
  options: EnqueueOptions | undefined,
  maxPayloadBytes: number,
): SizedJobInsert {
  const o = parseInput(enqueueOptionsSchema, options ?? {}, `options for job type "${def.type}"`);
  refuseProtoKey(`job type "${def.type}"`, payload);
  const parsed = parseInput(def.schema, payload, `payload for job type "${def.type}"`);
  refuseUndefined(`payload for job type "${def.type}"`, parsed);
  const { encoded, bytes } = encodeSizedPayload(`job type "${def.type}"`, parsed, maxPayloadBytes);
  assertStoredPayloadParses(def.schema, encoded, `payload for job type "${def.type}"`);
  const backoff = withBackoffOverride(def, o.backoff);
  const row: SizedJobInsert = {
    type: def.type,
    queue: o.queue ?? def.queue,
    payload: parsed,
    priority: o.priority ?? def.priority,
    max_attempts: o.maxAttempts ?? def.retry.maxAttempts,
    backoff_kind: backoff.kind,
    backoff_base_ms: backoff.baseMs,
    backoff_max_ms: backoff.maxMs,
    [PAYLOAD_BYTES]: bytes,
  };
  // A delay is added to the database clock, never this machine's.
  if (o.runAt) row.run_at = o.runAt.toISOString();
  else if (o.delayMs) row.delay_ms = o.delayMs;
  if (o.concurrencyKey !== undefined) row.concurrency_key = o.concurrencyKey;
  if (o.dedupeKey !== undefined) row.dedupe_key = o.dedupeKey;
  const timeoutMs = o.timeoutMs ?? def.timeoutMs;
  if (timeoutMs !== undefined) row.timeout_ms = timeoutMs;
  return row;
}

/**
 * The payload as the JSON the database stores. A value JSON cannot encode
 * (a BigInt, a cycle), would encode as null (NaN, Infinity, an invalid Date),
 * holds a `__proto__` key or jsonb cannot store is a ValidationError whose
 * issue path is relative to the payload; one over the size limit is a
 * PayloadTooLargeError.
 */
export function encodePayload(subject: string, payload: unknown, maxBytes: number): string {
  refuseProtoKey(subject, payload);
  return encodeSizedPayload(subject, payload, maxBytes).encoded;
}

/**
 * A payload that is undefined (after its schema: one with a default fills
 * it in) would be stored as null, not as what was given: a ValidationError,
 * as over HTTP, where a missing payload is refused. Pass null (with a schema
 * that takes it) or a value.
 */
export function refuseUndefined(what: string, payload: unknown, schema = true): void {
  if (payload !== undefined) return;
  const message = `is undefined, which would be stored as null: pass ${schema ? 'null (with a schema that takes it)' : 'null'} or a value`;
  throw new ValidationError(`invalid ${what}: ${message}`, [{ path: [], message }]);
}

/** A `__proto__` key (src/protoKeys.ts) in a payload: a ValidationError naming its path. */
function refuseProtoKey(subject: string, payload: unknown): void {
  const proto = protoKeyIssue(payload);
  if (proto) throw new ValidationError(`invalid payload for ${subject}: ${proto.path.join('.')}: ${proto.message}`, [proto]);
}

/** encodePayload's JSON and its size in bytes. */
function encodeSizedPayload(subject: string, payload: unknown, maxBytes: number): { encoded: string; bytes: number } {
  const what = `payload for ${subject}`;
  let encoded: string | undefined;
  let reason = 'it is not a JSON value';
  try {
    encoded = JSON.stringify(payload ?? null) as string | undefined;
  } catch (err) {
    reason = err instanceof RangeError ? 'it nests too deeply' : (err as Error).message;
  }
  if (encoded === undefined) {
    throw new ValidationError(`invalid ${what}: not JSON-serialisable (${reason})`, [{ path: [], message: `not JSON-serialisable: ${reason}` }]);
  }
  const bytes = Buffer.byteLength(encoded, 'utf8');
  if (bytes > maxBytes) throw new PayloadTooLargeError(subject, bytes, maxBytes);
  const problem = jsonProblem(encoded) ?? silentNull(payload, encoded);
  if (problem) {
    throw new ValidationError(`invalid ${what}: ${problem.path.length ? problem.path.join('.') : '(root)'}: ${problem.message}`, [problem]);
  }
  return { encoded, bytes };
}

// The shapes of the client calls' arguments that TypeScript cannot enforce
// at run time (JavaScript callers, values from JSON): checked before any SQL
// runs, so a typo or a wrong type is a ValidationError and nothing is written.
import * as z from 'zod';
import type { Queryable } from '../db/protocol.js';
import { isJobDefinition, type JobDefinition } from './defineJob.js';

/** cancel's options: only keepChildren, a boolean (a typo or a truthy string must not decide whether children are cancelled). */
export const cancelOptionsSchema = z.object({ keepChildren: z.boolean().optional() }).strict();

/** One enqueueMany item's shape, checked before its job is resolved (a typo like `option` is refused, not dropped). */
export const enqueueItemSchema = z
  .object({
    job: z.union([z.string(), z.custom<JobDefinition>(isJobDefinition)], { error: 'job must be a job type name or a defineJob() definition' }),
    payload: z.unknown(),
    options: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

/** migrate's options: only lockTimeoutMs (its range is checked by the migrator); a typo such as `lockTimeout` would leave the default in force. */
export const migrateOptionsSchema = z.object({ lockTimeoutMs: z.unknown().optional() }).strict();

/** A `tx` must be something that runs queries (a pg client or pool). */
export const txSchema = z
  .custom<Queryable>((v) => typeof v === 'object' && v !== null && typeof (v as Queryable).query === 'function', 'tx must be a pg client (or pool) with a query() method')
  .nullish();

export const alertsFilterSchema = z
  .object({ state: z.enum(['open', 'resolved']).optional(), limit: z.number().int().min(1).max(1000).default(200) })
  .strict();

/** enqueueMany's second argument: only `tx` (a typo such as `transaction` would commit the batch outside the caller's transaction). */
export const enqueueManyOptionsSchema = z.object({ tx: txSchema }).strict();

// createClient's options, parsed once when the client is built: where the
// database is (a URL or a pool of the caller's), the namespace, the job
// definitions, payload and pool limits, and optional wake hints.
import type pg from 'pg';
import * as z from 'zod';
import { connectionStringSchema } from '../db/connectionString.js';
import { oneConnectionTarget } from '../db/oneConnectionTarget.js';
import { namespaceSchema } from '../names.js';
import { isJobDefinition, type JobDefinition } from './defineJob.js';
import { DEFAULT_MAX_PAYLOAD_BYTES } from './enqueueInput.js';
import type { WakeHints } from './wakeHints.js';
import { isPgPool } from '../db/pgShape.js';
import type { AtMostOne } from '../exclusiveOptions.js';

/** The default bound on each of the client's own calls (`callTimeoutMs`). */
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;

export const clientOptionsSchema = z
  .object({
    connectionString: connectionStringSchema.optional(),
    pool: z.custom<pg.Pool>(isPgPool, 'pool must be a pg.Pool').optional(),
    namespace: namespaceSchema.default('default'),
    jobs: z.array(z.custom<JobDefinition>(isJobDefinition, 'a job must be a defineJob() value')).default([]),
    maxPayloadBytes: z.number().int().positive().max(64 * 1024 * 1024).default(DEFAULT_MAX_PAYLOAD_BYTES),
    /** Size of the pool the client creates (ignored when `pool` is given). */
    poolMax: z.number().int().positive().max(1000).default(10),
    /**
     * Bounds each query of the pool the client creates (ignored when `pool`
     * is given): one with no answer within it fails and its connection is
     * destroyed. Default none; the HTTP service sets one so a frozen
     * connection cannot hold a request forever.
     */
    queryTimeoutMs: z.number().int().positive().max(3_600_000).optional(),
    /**
     * Bounds each of the client's own calls (enqueue, getJob, cancel, publish,
     * admin and outbox calls, signals, ...): a connection within it, then each
     * query within it; a query with no answer fails with
     * DatabaseUnavailableError and its connection is destroyed, so a frozen
     * server cannot hold a caller (or close()) forever. Not applied to a call
     * made in your `tx`, to migrate(), or to workers (their calls have their
     * own bounds).
     */
    callTimeoutMs: z.number().int().positive().max(3_600_000).default(DEFAULT_CALL_TIMEOUT_MS),
    /** Wake hints beside NOTIFY (e.g. redisWakeHints): published after each enqueue this client commits; its workers subscribe. */
    wakeHints: z
      .custom<WakeHints>((v) => typeof v === 'object' && v !== null && typeof (v as WakeHints).publish === 'function', 'wakeHints must be a WakeHints')
      .optional(),
  })
  .strict()
  .superRefine(oneConnectionTarget);

/**
 * createClient's options: a `connectionString` or a `pool`, never both (the
 * type says so as the check does). A connectionString typed `string |
 * undefined` (`process.env.DATABASE_URL`) is taken: unset, it is a
 * ConfigError saying so.
 */
export type ClientOptions = AtMostOne<z.input<typeof clientOptionsSchema>, 'connectionString', 'pool'>;

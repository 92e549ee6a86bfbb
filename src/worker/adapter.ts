// createWorkhorseAdapter: the database resources of a worker process in one
// object the process owns: the pg pool (made from a connection string, or
// one the caller gives), the namespace, the job definitions and, with a
// Redis URL, the Redis wake hints. defineWorkerProcess builds its workers
// on the adapter's client and closes the adapter when they have stopped.
import type pg from 'pg';
import * as z from 'zod';
import { Client } from '../client/client.js';
import type { JobDefinition } from '../client/defineJob.js';
import { connectionStringSchema } from '../db/connectionString.js';
import { oneConnectionTarget } from '../db/oneConnectionTarget.js';
import { pingDatabase } from '../db/ping.js';
import { namespaceSchema } from '../names.js';
import { parseConfig } from '../validation.js';
import { redisUrlSchema } from './redisUrl.js';
import { redisWakeHints, type RedisWakeHints } from './redisWakeHints.js';
import { isPgPool } from '../db/pgShape.js';

const adapterOptionsSchema = z
  .object({
    /** postgres://… (exactly one of connectionString or pool). */
    connectionString: connectionStringSchema.optional(),
    /** A pool the caller owns (it is not closed with the adapter). */
    pool: z.custom<pg.Pool>(isPgPool, 'pool must be a pg.Pool').optional(),
    namespace: namespaceSchema.default('default'),
    /** Connections in the pool the adapter makes (ignored with `pool`). */
    poolSize: z.number().int().min(1).max(1000).default(10),
    /** Job definitions, so stored payloads are parsed by their schemas. */
    jobs: z.array(z.custom<JobDefinition>((v) => typeof v === 'object' && v !== null && 'type' in v && 'schema' in v)).default([]),
    /** redis://… turns on the Redis wake-up (hints only; PostgreSQL stays the truth). */
    redisUrl: redisUrlSchema.optional(),
  })
  .strict()
  .superRefine(oneConnectionTarget);

export type WorkhorseAdapterOptions = z.input<typeof adapterOptionsSchema>;

export interface WorkhorseAdapter {
  /** The client every worker of the process is built on. */
  readonly client: Client;
  readonly namespace: string;
  /** One round trip to the database (the readiness probe). */
  ping(timeoutMs?: number): Promise<void>;
  /** Closes what the adapter made: the pool it created and the Redis connections. */
  close(): Promise<void>;
}

class Adapter implements WorkhorseAdapter {
  readonly client: Client;
  private readonly hints: RedisWakeHints | undefined;
  private closing: Promise<void> | undefined;

  constructor(o: z.output<typeof adapterOptionsSchema>) {
    this.hints = o.redisUrl ? redisWakeHints({ url: o.redisUrl }) : undefined;
    this.client = new Client({
      ...(o.pool ? { pool: o.pool } : { connectionString: o.connectionString!, poolMax: o.poolSize }),
      namespace: o.namespace,
      jobs: o.jobs,
      ...(this.hints ? { wakeHints: this.hints } : {}),
    });
  }

  get namespace(): string {
    return this.client.namespace;
  }

  ping(timeoutMs = 2_000): Promise<void> {
    return pingDatabase(this.client.pool, timeoutMs);
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.hints?.close();
      await this.client.close();
    })();
    return this.closing;
  }
}

/** The database resources of a worker process (see defineWorkerProcess). */
export function createWorkhorseAdapter(options: WorkhorseAdapterOptions): WorkhorseAdapter {
  return new Adapter(parseConfig(adapterOptionsSchema, options, 'adapter options'));
}

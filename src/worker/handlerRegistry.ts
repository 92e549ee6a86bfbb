// The worker's job types and what runs them: a per-job handler or a batch
// handler, with the job's definition when the client knows it (so stored
// payloads are parsed by the job's schema). The registered types are
// exactly the types the worker claims; a type given by name is checked to
// be one PostgreSQL can store (it goes into the registry row and the claim).
import * as z from 'zod';
import type { Client } from '../client/client.js';
import { isJobDefinition, type JobDefinition } from '../client/defineJob.js';
import { ConfigError, ValidationError } from '../errors.js';
import { handlerTypeSchema } from '../names.js';
import { parseField } from '../validation.js';
import type { BatchHandler } from './invokeBatch.js';
import type { Handler, HandlerEntry } from './invokeHandler.js';

const batchOptionsSchema = z.object({ maxBatch: z.unknown().optional() }).strict();

export class HandlerRegistry {
  private readonly entries = new Map<string, HandlerEntry>();

  constructor(private readonly client: Client) {}

  addHandler(job: JobDefinition | string, fn: Handler<never>): void {
    this.add(job, fn, { fn: fn as Handler });
  }

  /** `options` is handleBatch's: only `maxBatch` (a typo such as `max` would leave the default of 50 in force). */
  addBatchHandler(job: JobDefinition | string, fn: BatchHandler<never>, options: unknown = {}): void {
    const label = typeof job === 'string' ? job : job?.type;
    const { maxBatch = 50 } = parseField(batchOptionsSchema, options, 'options', `handleBatch for "${label}"`);
    if (typeof maxBatch !== 'number' || !Number.isInteger(maxBatch) || maxBatch < 1) {
      throw new ValidationError(`maxBatch for "${label}" must be a positive integer`);
    }
    this.add(job, fn, { batch: fn as BatchHandler, maxBatch });
  }

  get(type: string): HandlerEntry | undefined {
    return this.entries.get(type);
  }

  get size(): number {
    return this.entries.size;
  }

  get types(): string[] {
    return [...this.entries.keys()];
  }

  private add(job: JobDefinition | string, fn: unknown, entry: Omit<HandlerEntry, 'def'>): void {
    // A look-alike ({ type: 'x' }: no schema to parse payloads with) or a number would register a type no job can run.
    if (typeof job !== 'string' && !isJobDefinition(job)) {
      throw new ValidationError('a handler is for a job type name or a defineJob() definition', [
        { path: ['job'], message: 'expected a job type name or a defineJob() definition' },
      ]);
    }
    const type = typeof job === 'string' ? parseField(handlerTypeSchema, job, 'type', 'handler') : job.type;
    if (typeof fn !== 'function') throw new ValidationError(`handler for "${type}" must be a function`);
    if (this.entries.has(type)) throw new ValidationError(`a handler for "${type}" is already registered`);
    // Another definition under the client's name for the type would parse stored payloads with the wrong schema: every job would fail.
    if (typeof job !== 'string' && this.client.hasDefinition(type) && this.client.definition(type) !== job) {
      throw new ConfigError(`two different job definitions are named "${type}": the worker's handler was given one the client does not know (import the same defineJob() value the client has)`);
    }
    const def = typeof job === 'string' ? (this.client.hasDefinition(type) ? this.client.definition(type) : undefined) : job;
    this.entries.set(type, { ...entry, def });
  }
}

// The operator's view of the outbox (client.outbox and the HTTP routes):
// list events by state and topic, retry dead ones (a fresh attempt budget,
// due now) and discard pending or dead ones. One protocol call each.
import * as z from 'zod';
import type { OutboxEventRecord, Protocol, Queryable } from '../db/protocol.js';
import { bigintIdString } from '../storable.js';
import { parseInput } from '../validation.js';
import { topicSchema } from './publish.js';

export const listOutboxSchema = z
  .object({
    state: z.enum(['pending', 'delivered', 'dead']).optional(),
    topic: topicSchema.optional(),
    limit: z.number().int().min(1).max(500).default(100),
    /** Keyset cursor: the last id of the previous page; null or absent, the first page (as admin.listJobs takes it). */
    cursor: bigintIdString('cursor').nullish(),
  })
  .strict();

export const eventIdsSchema = z.array(bigintIdString('event id')).min(1).max(1000);

/**
 * What retry and discard take: an array of ids as strings or numbers
 * (anything else is a ValidationError, not a TypeError). A number must be a
 * safe integer: past 2^53 it is already another id (9007199254740993 is
 * 9007199254740992), which would be retried or discarded in its place.
 */
const idListSchema = z.array(
  z.custom<string | number>(
    (v) => typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v)),
    'an event id is a string or a whole number (a safe integer: pass larger ids as strings)',
  ),
);

function eventIds(ids: unknown): string[] {
  return parseInput(eventIdsSchema, parseInput(idListSchema, ids, 'event ids').map(String), 'event ids');
}

export type ListOutboxFilter = z.input<typeof listOutboxSchema>;

export class OutboxAdmin {
  constructor(
    private readonly protocol: Protocol,
    private readonly db: Queryable,
    private readonly namespace: string,
  ) {}

  /** Newest first. */
  async list(filter: ListOutboxFilter = {}): Promise<OutboxEventRecord[]> {
    const f = parseInput(listOutboxSchema, filter, 'outbox filter');
    return this.protocol.listOutbox(this.db, this.namespace, { state: f.state, topic: f.topic, limit: f.limit, beforeId: f.cursor ?? undefined });
  }

  /** Makes dead (or waiting) events due now with a fresh attempt budget. Returns the ids changed. */
  async retry(ids: (string | number)[]): Promise<string[]> {
    return this.protocol.retryOutbox(this.db, this.namespace, eventIds(ids));
  }

  /** Deletes pending or dead events, which are then never delivered. Returns the ids deleted. */
  async discard(ids: (string | number)[]): Promise<string[]> {
    return this.protocol.discardOutbox(this.db, this.namespace, eventIds(ids));
  }
}

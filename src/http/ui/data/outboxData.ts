// What the Outbox view reads: the events not delivered yet (pending) and
// those that ran out of attempts (dead), newest first, through the client
// (client.outbox.list, as GET /outbox answers it); or one state, filtered
// by topic when asked; a page at a time, older pages by the keyset cursor
// `before` (the last event id shown).
import * as z from 'zod';
import type { Client } from '../../../client/client.js';
import type { OutboxEventRecord } from '../../../db/protocol.js';
import { topicSchema } from '../../../outbox/publish.js';
import { bigintIdString } from '../../../storable.js';
import { parseInput } from '../../../validation.js';
import { noticeQuery } from '../views/common.js';

export const EVENTS_SHOWN = 100;
export const OUTBOX_STATES = ['pending', 'dead', 'delivered'] as const;

const empty = (v: unknown) => (v === '' ? undefined : v);

export const outboxQuery = z
  .object({
    state: z.preprocess(empty, z.enum(OUTBOX_STATES).optional()),
    topic: z.preprocess(empty, topicSchema.optional()),
    /** Events older than this id (the last one of the previous page). */
    before: z.preprocess(empty, bigintIdString('an event id').optional()),
    ...noticeQuery,
  })
  .strict();
export type OutboxFilter = z.output<typeof outboxQuery>;

/** The page an outbox action came from (its filter and cursor, posted back as hidden fields), to answer back to. */
export const outboxPageFields = outboxQuery.pick({ state: true, topic: true, before: true });

/** The Outbox page of filter `f`, older than `before` when given. */
export function outboxPageUrl(f: Pick<OutboxFilter, 'state' | 'topic'>, before?: string): string {
  const q = new URLSearchParams();
  if (f.state) q.set('state', f.state);
  if (f.topic) q.set('topic', f.topic);
  if (before) q.set('before', before);
  const s = q.toString();
  return s ? `/ui/outbox?${s}` : '/ui/outbox';
}

export interface OutboxData {
  /** Newest first. */
  events: OutboxEventRecord[];
  filter: OutboxFilter;
  /** The `before` of the next (older) page, or null on the last page. */
  nextBefore: string | null;
  nowMs: number;
}

export async function loadOutbox(client: Client, query: Record<string, string | string[]>, nowMs: number): Promise<OutboxData> {
  const f = parseInput(outboxQuery, query, 'query');
  const topic = f.topic;
  const states = f.state ? [f.state] : (['pending', 'dead'] as const);
  // One more than a page: whether an older page exists. Every state's list
  // is cut at the same cursor, so the merged pages neither skip nor repeat.
  const lists = await Promise.all(states.map((state) => client.outbox.list({ state, topic, limit: EVENTS_SHOWN + 1, cursor: f.before })));
  const merged = lists.flat().sort((a, b) => (BigInt(b.id) > BigInt(a.id) ? 1 : -1));
  const events = merged.slice(0, EVENTS_SHOWN);
  const nextBefore = merged.length > EVENTS_SHOWN ? events[events.length - 1]!.id : null;
  return { events, filter: f, nowMs, nextBefore };
}

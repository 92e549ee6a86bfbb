// sql/protocol/outbox.sql: publish an event in the caller's transaction,
// lease a delivery batch, record its outcome, and the operator's list,
// retry and discard.
import type { Queryable } from '../queryable.js';
import { mapped } from '../sqlState.js';

export type OutboxState = 'pending' | 'delivered' | 'dead';

/** An event as a deliverer leases it. */
export interface LeasedEvent {
  id: string;
  topic: string;
  key: string | null;
  payload: unknown;
  /** Failed deliveries so far. */
  attempts: number;
  createdAt: Date;
}

export interface OutboxEventRecord extends LeasedEvent {
  state: OutboxState;
  availableAt: Date;
  leasedUntil: Date | null;
  lastError: unknown;
  deliveredAt: Date | null;
}

/** `payloadJson` is the payload's JSON text. Returns the event's id. */
export function publish(db: Queryable, ns: string, topic: string, key: string | null, payloadJson: string, delayMs: number): Promise<string> {
  return mapped({}, async () => {
    const r = await db.query<{ id: string }>('select workhorse.publish_v1($1, $2, $3, $4::jsonb, $5) as id', [ns, topic, key, payloadJson, delayMs]);
    return String(r.rows[0]!.id);
  });
}

interface EventRow {
  id: string;
  topic: string;
  key: string | null;
  payload: unknown;
  attempts: number;
  created_at: Date;
}

/** Leased events, in id order. */
export function leaseOutbox(db: Queryable, ns: string, owner: string, limit: number, leaseMs: number): Promise<LeasedEvent[]> {
  return mapped({}, async () => {
    const r = await db.query<EventRow>('select * from workhorse.outbox_lease_v1($1, $2, $3, $4)', [ns, owner, limit, leaseMs]);
    return r.rows
      .map((x) => ({ id: String(x.id), topic: x.topic, key: x.key, payload: x.payload, attempts: x.attempts, createdAt: x.created_at }))
      .sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
  });
}

export interface OutboxSettlement {
  delivered: string[];
  failed: { id: string; error: unknown }[];
  released: string[];
}

export interface OutboxRetryPolicy {
  maxAttempts: number;
  baseMs: number;
  maxMs: number;
}

export function settleOutbox(
  db: Queryable,
  ns: string,
  owner: string,
  s: OutboxSettlement,
  policy: OutboxRetryPolicy,
): Promise<{ delivered: number; retried: number; dead: number }> {
  return mapped({}, async () => {
    const r = await db.query<{ delivered: number; retried: number; dead: number }>(
      'select * from workhorse.outbox_settle_v1($1, $2, $3::bigint[], $4::bigint[], $5::jsonb, $6::bigint[], $7, $8, $9)',
      [ns, owner, s.delivered, s.failed.map((f) => f.id), JSON.stringify(s.failed.map((f) => f.error ?? null)), s.released, policy.maxAttempts, policy.baseMs, policy.maxMs],
    );
    return r.rows[0]!;
  });
}

/** Releases the pending events `owner` still leases (after a lost lease answer or an unwritten settlement). How many. */
export function releaseOutbox(db: Queryable, ns: string, owner: string): Promise<number> {
  return mapped({}, async () => {
    const r = await db.query<{ n: number }>('select workhorse.outbox_release_v1($1, $2) as n', [ns, owner]);
    return r.rows[0]!.n;
  });
}

export interface OutboxListFilter {
  state?: OutboxState;
  topic?: string;
  limit?: number;
  beforeId?: string;
}

export function listOutbox(db: Queryable, ns: string, f: OutboxListFilter): Promise<OutboxEventRecord[]> {
  return mapped({}, async () => {
    const r = await db.query<EventRow & { state: OutboxState; available_at: Date; leased_until: Date | null; last_error: unknown; delivered_at: Date | null }>(
      'select * from workhorse.list_outbox_v1($1, $2, $3, $4, $5)',
      [ns, f.state ?? null, f.topic ?? null, f.limit ?? 100, f.beforeId ?? null],
    );
    return r.rows.map((x) => ({
      id: String(x.id),
      topic: x.topic,
      key: x.key,
      payload: x.payload,
      attempts: x.attempts,
      createdAt: x.created_at,
      state: x.state,
      availableAt: x.available_at,
      leasedUntil: x.leased_until,
      lastError: x.last_error,
      deliveredAt: x.delivered_at,
    }));
  });
}

/** Ids changed. */
export function retryOutbox(db: Queryable, ns: string, ids: string[]): Promise<string[]> {
  return mapped({}, async () => {
    const r = await db.query<{ id: string }>('select id from workhorse.retry_outbox_v1($1, $2::bigint[]) id', [ns, ids]);
    return r.rows.map((x) => String(x.id));
  });
}

/** Ids deleted. */
export function discardOutbox(db: Queryable, ns: string, ids: string[]): Promise<string[]> {
  return mapped({}, async () => {
    const r = await db.query<{ id: string }>('select id from workhorse.discard_outbox_v1($1, $2::bigint[]) id', [ns, ids]);
    return r.rows.map((x) => String(x.id));
  });
}

/** Milliseconds until the soonest pending event not leasable now becomes leasable (null: none). */
export function outboxNextDueMs(db: Queryable, ns: string): Promise<number | null> {
  return mapped({}, async () => {
    const r = await db.query<{ ms: string | null }>('select workhorse.outbox_next_due_ms_v1($1) as ms', [ns]);
    const ms = r.rows[0]?.ms;
    return ms === null || ms === undefined ? null : Number(ms);
  });
}

/** Delivered events removed. */
export function purgeOutbox(db: Queryable, ns: string, olderThanMs: number, limit: number): Promise<number> {
  return mapped({}, async () => {
    const r = await db.query<{ n: number }>('select workhorse.purge_outbox_v1($1, $2, $3) as n', [ns, olderThanMs, limit]);
    return r.rows[0]!.n;
  });
}

/** The job lifecycle events a namespace can publish (topic workhorse.job.<event>). */
export const LIFECYCLE_EVENTS = ['succeeded', 'failed', 'dead', 'decision', 'cancelled'] as const;
export type LifecycleEvent = (typeof LIFECYCLE_EVENTS)[number];

/** Which job lifecycle events settlements publish through the outbox in this namespace ([] for none). */
export function setOutboxLifecycle(db: Queryable, ns: string, events: LifecycleEvent[]): Promise<void> {
  return mapped({}, async () => {
    await db.query('select workhorse.set_outbox_lifecycle_v1($1, $2::text[])', [ns, events]);
  });
}

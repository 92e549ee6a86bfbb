// sql/protocol/waits.sql: a running handler's durable waits (opened under
// the fence, resolved once, replayed from the record) and the suspension
// of a job that waits. A refused write (WH409) is a StaleLeaseError.
import { integerArrayLiteral, textArrayLiteral } from '../arrayLiteral.js';
import type { Queryable } from '../queryable.js';
import { mapped } from '../sqlState.js';
import type { LeaseRef } from './heartbeat.js';

export type WaitKind = 'sleep' | 'signal' | 'decision' | 'join';

/** The run_at (ms) of a job waiting with nothing to wake it on its own (never_v1: a signal, decision or join without timeout). */
export const NEVER_DUE_AT = Date.parse('9999-01-01T00:00:00Z');

/** Whether a job's run_at is that "never" of a wait (not a ready job's, which a client may set to any time up to 9999-12-31). */
export function dueNever(job: { runAt: Date; status: string }): boolean {
  return job.runAt.getTime() === NEVER_DUE_AT && job.status !== 'ready';
}

/** What a wait is for: its kind and the kind's parameters. */
export interface WaitSpec {
  kind: WaitKind;
  /** A sleep's length, or a timeout, from the database clock's now when the wait first opens. */
  wakeInMs?: number | null;
  /** An absolute wake time (sleepUntil). */
  wakeAt?: Date | null;
  key?: string | null;
  choices?: string[] | null;
  prompt?: string | null;
  children?: string[] | null;
  mode?: 'all' | 'any' | null;
}

export interface WaitState {
  resolved: boolean;
  /** done, timeout, or lost (a race's loser, closed by loseWaits); null while it waits. */
  outcome: 'done' | 'timeout' | 'lost' | null;
  value: unknown;
  wakeAt: Date | null;
  startedAt: Date;
  /** When it resolved (or was closed as lost); null while it waits. */
  resolvedAt: Date | null;
}

/** Opens (or, on a replay, finds) the wait and tries to resolve it. */
export function beginWait(db: Queryable, ns: string, lease: LeaseRef, name: string, spec: WaitSpec): Promise<WaitState> {
  return mapped({ lease, what: `wait "${name}"` }, async () => {
    const r = await db.query<{
      resolved: boolean;
      outcome: WaitState['outcome'];
      value: unknown;
      wake_at: Date | null;
      started_at: Date;
      resolved_at: Date | null;
    }>(
      'select * from workhorse.begin_wait_v1($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::bigint[], $12)',
      [
        ns,
        lease.id,
        lease.execution,
        name,
        spec.kind,
        spec.wakeInMs == null ? null : Math.round(spec.wakeInMs),
        spec.wakeAt ?? null,
        spec.key ?? null,
        spec.choices ?? null,
        spec.prompt ?? null,
        spec.children ? integerArrayLiteral(spec.children) : null,
        spec.mode ?? null,
      ],
    );
    const x = r.rows[0]!;
    return { resolved: x.resolved, outcome: x.outcome, value: x.value, wakeAt: x.wake_at, startedAt: x.started_at, resolvedAt: x.resolved_at };
  });
}

/** Closes waits the handler went on past without them (a race's losers): outcome lost, under the fence. */
export function loseWaits(db: Queryable, ns: string, lease: LeaseRef, names: string[]): Promise<number> {
  return mapped({ lease, what: `close the waits ${names.map((n) => `"${n}"`).join(', ')} that lost a race` }, async () => {
    const r = await db.query<{ n: number }>('select workhorse.lose_waits_v1($1, $2, $3, $4::text[]) as n', [
      ns,
      lease.id,
      lease.execution,
      textArrayLiteral(names),
    ]);
    return r.rows[0]!.n;
  });
}

export interface Suspended {
  /** waiting; or ready when what it waits for arrived while it suspended. */
  status: 'waiting' | 'ready';
  runAt: Date;
}

/** Suspends the job on its open wait under the fence: the lease ends, the attempt is not counted. */
export function suspend(db: Queryable, ns: string, lease: LeaseRef, wait: string): Promise<Suspended> {
  return mapped({ lease, what: `suspend on wait "${wait}"` }, async () => {
    const r = await db.query<{ status: Suspended['status']; run_at: Date }>('select * from workhorse.suspend_v1($1, $2, $3, $4)', [
      ns,
      lease.id,
      lease.execution,
      wait,
    ]);
    const x = r.rows[0]!;
    return { status: x.status, runAt: x.run_at };
  });
}

/** One suspension of a batch: the lease and the wait it suspends on. */
export interface Suspension extends LeaseRef {
  wait: string;
}

/** Suspends a batch in one statement; the accepted ones by id (the others were refused by the fence). */
export function suspendMany(db: Queryable, ns: string, items: Suspension[]): Promise<Map<string, Suspended>> {
  if (items.length === 0) return Promise.resolve(new Map());
  return mapped({}, async () => {
    const r = await db.query<{ id: string; status: Suspended['status']; run_at: Date }>(
      'select * from workhorse.suspend_many_v1($1, $2::bigint[], $3::bigint[], $4::text[])',
      [
        ns,
        integerArrayLiteral(items.map((i) => i.id)),
        integerArrayLiteral(items.map((i) => i.execution)),
        textArrayLiteral(items.map((i) => i.wait)),
      ],
    );
    return new Map(r.rows.map((x) => [String(x.id), { status: x.status, runAt: x.run_at }]));
  });
}

/** What a waiting job waits for, and since when. */
export interface WaitRecord {
  name: string;
  kind: WaitKind;
  since: Date;
  /** When a sleep ends or the wait times out; null: never. */
  wakeAt: Date | null;
  key: string | null;
  choices: string[] | null;
  prompt: string | null;
  children: string[] | null;
}

export function currentWait(db: Queryable, ns: string, jobId: string): Promise<WaitRecord | null> {
  return mapped({}, async () => {
    const r = await db.query('select * from workhorse.current_wait_v1($1, $2)', [ns, jobId]);
    return r.rows[0] ? toWaitRecord(r.rows[0]) : null;
  });
}

/** Every open wait of the job, newest first: a job may wait on several at once (Promise.race, Promise.all). */
export function openWaits(db: Queryable, ns: string, jobId: string): Promise<WaitRecord[]> {
  return mapped({}, async () => {
    const r = await db.query('select * from workhorse.open_waits_v1($1, $2)', [ns, jobId]);
    return r.rows.map(toWaitRecord);
  });
}

/* eslint-disable-next-line @typescript-eslint/no-explicit-any */
function toWaitRecord(w: any): WaitRecord {
  return {
    name: w.name,
    kind: w.kind,
    since: w.started_at,
    wakeAt: w.wake_at,
    key: w.key,
    choices: w.choices,
    prompt: w.prompt,
    children: w.children ? (w.children as unknown[]).map(String) : null,
  };
}

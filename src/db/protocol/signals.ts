// sql/protocol/signals.sql: signals to a job or a key, human decisions and
// the list of decisions waiting for people.
import type { Queryable } from '../queryable.js';
import { jsonParam } from '../queryable.js';
import { mapped } from '../sqlState.js';

/**
 * delivered: the job was waiting for it and is ready now; kept: stored until
 * the wait consumes it; duplicate: refused, the name was already signalled
 * (or its wait resolved); not_a_signal: the name is a sleep, decision or
 * join wait of the job, which no signal resolves; ended: the job finished; not_found.
 */
export type SignalOutcome = 'delivered' | 'kept' | 'duplicate' | 'not_a_signal' | 'ended' | 'not_found';

export function signalJob(db: Queryable, ns: string, jobId: string, name: string, payload: unknown): Promise<SignalOutcome> {
  return mapped({}, async () => {
    const r = await db.query<{ outcome: SignalOutcome }>('select workhorse.signal_job_v1($1, $2, $3, $4::jsonb) as outcome', [
      ns,
      jobId,
      name,
      jsonParam(payload),
    ]);
    return r.rows[0]!.outcome;
  });
}

export function signalKey(
  db: Queryable,
  ns: string,
  key: string,
  name: string,
  payload: unknown,
): Promise<{ outcome: Exclude<SignalOutcome, 'not_a_signal' | 'ended' | 'not_found'>; jobId: string | null }> {
  return mapped({}, async () => {
    const r = await db.query<{ outcome: 'delivered' | 'kept' | 'duplicate'; job_id: string | null }>(
      'select * from workhorse.signal_key_v1($1, $2, $3, $4::jsonb)',
      [ns, key, name, jsonParam(payload)],
    );
    const x = r.rows[0]!;
    return { outcome: x.outcome, jobId: x.job_id === null ? null : String(x.job_id) };
  });
}

export type DecideOutcome = 'decided' | 'invalid_choice' | 'resolved' | 'ended' | 'no_decision' | 'not_found';

/** The recorded decision: the audit trail. */
export interface Decision {
  choice: string;
  by: string;
  comment: string | null;
  at: Date;
}

export function decide(
  db: Queryable,
  ns: string,
  jobId: string,
  name: string,
  d: { choice: string; by: string; comment?: string | null },
): Promise<{ outcome: DecideOutcome; choices: string[] | null; decision: Decision | null }> {
  return mapped({}, async () => {
    const r = await db.query<{ outcome: DecideOutcome; choices: string[] | null; value: Record<string, unknown> | null }>(
      'select * from workhorse.decide_v1($1, $2, $3, $4, $5, $6)',
      [ns, jobId, name, d.choice, d.by, d.comment ?? null],
    );
    const x = r.rows[0]!;
    return { outcome: x.outcome, choices: x.choices, decision: x.value && 'choice' in x.value ? toDecision(x.value) : null };
  });
}

export function toDecision(v: Record<string, unknown>): Decision {
  return { choice: String(v.choice), by: String(v.by), comment: (v.comment as string | null) ?? null, at: new Date(String(v.at)) };
}

export interface PendingDecision {
  jobId: string;
  name: string;
  prompt: string | null;
  choices: string[];
  since: Date;
  /** When the decision times out; null: never. */
  timeoutAt: Date | null;
  queue: string;
  type: string;
}

export function listDecisions(
  db: Queryable,
  ns: string,
  f: { queue?: string | null; type?: string | null; limit: number },
): Promise<PendingDecision[]> {
  return mapped({}, async () => {
    const r = await db.query('select * from workhorse.list_decisions_v1($1, $2, $3, $4)', [ns, f.queue ?? null, f.type ?? null, f.limit]);
    return r.rows.map((x) => ({
      jobId: String(x.job_id),
      name: x.name,
      prompt: x.prompt,
      choices: x.choices,
      since: x.started_at,
      timeoutAt: x.wake_at,
      queue: x.queue,
      type: x.type,
    }));
  });
}

// sql/protocol/settle.sql: record handler outcomes under the fence, one
// statement per batch. Parameters travel as prebuilt array literals
// (arrayLiteral.ts): for hundreds of ids and results per statement that
// costs a fraction of the driver's per-element quoting.
import { integerArrayLiteral, textArrayLiteral } from '../arrayLiteral.js';
import { jsonParam, type Queryable } from '../queryable.js';
import { mapped } from '../sqlState.js';
import { jsonProblem } from '../../storable.js';
import type { LeaseRef } from './heartbeat.js';
import { inLeaseOrder } from './leaseOrder.js';

/** A completion: the lease and the handler's result as JSON text (see resultJson). */
export interface Completion extends LeaseRef {
  resultJson: string;
}

export interface Failure extends LeaseRef {
  error: unknown;
  /** Overrides the job's backoff for this retry. */
  retryDelayMs?: number | null;
  /** Ends the job `failed` now, whatever attempts remain. */
  final?: boolean;
}

export interface FailOutcome {
  id: string;
  status: 'ready' | 'failed';
  runAt: Date;
}

/**
 * JSON text of a handler result (undefined is stored as null); throws on
 * values JSON cannot hold, and on JSON PostgreSQL's jsonb refuses (a NUL or
 * a lone surrogate in a string, nesting deeper than MAX_JSON_DEPTH), which
 * would otherwise fail the whole settlement batch it is written in.
 */
export function resultJson(value: unknown): string {
  const text = jsonParam(value) as string | undefined; // JSON.stringify gives undefined for a function or symbol
  if (text === undefined) throw new TypeError(`a ${typeof value} is not JSON`);
  const problem = jsonProblem(text);
  if (problem) throw new TypeError(`${problem.path.length ? `at ${problem.path.join('.')}: ` : ''}it ${problem.message}`);
  return text;
}

/** Returns the ids accepted; the others were refused by the fence. Sent in lease order (leaseOrder.ts). */
export function completeMany(db: Queryable, ns: string, batch: Completion[]): Promise<Set<string>> {
  if (batch.length === 0) return Promise.resolve(new Set());
  const items = inLeaseOrder(batch);
  return mapped({}, async () => {
    const r = await db.query<{ id: string }>('select id from workhorse.complete_many_v1($1, $2::bigint[], $3::bigint[], $4::jsonb[]) as id', [
      ns,
      integerArrayLiteral(items.map((i) => i.id)),
      integerArrayLiteral(items.map((i) => i.execution)),
      textArrayLiteral(items.map((i) => i.resultJson)),
    ]);
    return new Set(r.rows.map((x) => String(x.id)));
  });
}

/** Returns the accepted failures; ids missing were refused by the fence. Sent in lease order (leaseOrder.ts). */
export function failMany(db: Queryable, ns: string, batch: Failure[]): Promise<Map<string, FailOutcome>> {
  if (batch.length === 0) return Promise.resolve(new Map());
  const items = inLeaseOrder(batch);
  return mapped({}, async () => {
    const r = await db.query<{ id: string; status: 'ready' | 'failed'; run_at: Date }>(
      'select * from workhorse.fail_many_v1($1, $2::bigint[], $3::bigint[], $4::jsonb[], $5::integer[], $6::boolean[])',
      [
        ns,
        items.map((i) => i.id),
        items.map((i) => i.execution),
        items.map((i) => jsonParam(i.error)),
        items.map((i) => (i.retryDelayMs == null ? null : Math.round(i.retryDelayMs))),
        items.map((i) => i.final ?? false),
      ],
    );
    return new Map(r.rows.map((x) => [String(x.id), { id: String(x.id), status: x.status, runAt: x.run_at }]));
  });
}

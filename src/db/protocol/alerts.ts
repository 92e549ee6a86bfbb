// sql/protocol/alerts.sql: evaluate the alert rules (open, resolve and
// publish in one statement) and list the alerts.
import type { Queryable } from '../queryable.js';
import { mapped } from '../sqlState.js';

export type AlertState = 'open' | 'resolved';

export interface AlertRecord {
  rule: string;
  key: string;
  state: AlertState;
  openedAt: Date;
  resolvedAt: Date | null;
  details: Record<string, unknown>;
}

interface AlertRow {
  rule: string;
  key: string;
  state: AlertState;
  opened_at: Date;
  resolved_at: Date | null;
  details: Record<string, unknown>;
}

const toRecord = (x: AlertRow): AlertRecord => ({
  rule: x.rule,
  key: x.key,
  state: x.state,
  openedAt: x.opened_at,
  resolvedAt: x.resolved_at,
  details: x.details,
});

/** `rules` maps each rule to evaluate to its thresholds. Returns the alerts opened or resolved. */
/** `publish`: write each opening and resolution to the outbox (the evaluator has sinks to deliver them). */
export function evaluateAlerts(db: Queryable, ns: string, rules: Record<string, Record<string, number>>, publish = true): Promise<AlertRecord[]> {
  return mapped({}, async () => {
    const r = await db.query<AlertRow>('select * from workhorse.evaluate_alerts_v2($1, $2::jsonb, $3)', [ns, JSON.stringify(rules), publish]);
    return r.rows.map(toRecord);
  });
}

export function listAlerts(db: Queryable, ns: string, state: AlertState | null, limit: number): Promise<AlertRecord[]> {
  return mapped({}, async () => {
    const r = await db.query<AlertRow>('select * from workhorse.list_alerts_v1($1, $2, $3)', [ns, state, limit]);
    return r.rows.map(toRecord);
  });
}

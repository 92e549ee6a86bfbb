// Shared pieces of the tick tests: a Lambda context whose remaining time
// counts down, an EventBridge scheduled event, the tick environment for the
// shipped handler (loaded fresh, since it reads its config once per
// container), and small SQL probes on the admin pool.
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { vi } from 'vitest';
import type { TickContext } from '../../src/tick/handler.js';
import type { TickSummary } from '../../src/tick/summary.js';

const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = join(here, '..', '..');
export const fixtureApp = join(repoRoot, 'test', 'fixtures', 'tick-app.ts');

/** A context like Lambda's: getRemainingTimeInMillis() counts down from `budgetMs`. */
export function lambdaContext(budgetMs: number): TickContext & { deadline: number } {
  const deadline = Date.now() + budgetMs;
  return {
    deadline,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    awsRequestId: randomBytes(8).toString('hex'),
    functionName: 'workhorse-tick-test',
    functionVersion: '$LATEST',
  };
}

/** What EventBridge sends on a schedule. */
export function scheduledEvent(): Record<string, unknown> {
  return {
    version: '0',
    id: randomBytes(8).toString('hex'),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: '123456789012',
    time: new Date().toISOString(),
    region: 'us-east-1',
    resources: ['arn:aws:events:us-east-1:123456789012:rule/workhorse-tick'],
    detail: {},
  };
}

const TICK_VARS = [
  'DATABASE_URL',
  'WORKHORSE_APP',
  'WORKHORSE_NAMESPACE',
  'WORKHORSE_HEARTBEAT_MS',
  'WORKHORSE_SAFETY_MARGIN_MS',
  'WORKHORSE_CONCURRENCY',
  'WORKHORSE_QUEUES',
  'WORKHORSE_UNTIL_EMPTY',
  'WORKHORSE_SKIPS_BY_TYPE',
  'WORKHORSE_SCHEDULE_NAMESPACES',
  'WORKHORSE_SCHEDULE_CATCHUP_LIMIT',
  'WORKHORSE_RETENTION_MS',
  'WORKHORSE_RETENTION_EVERY_MS',
  'WORKHORSE_MAX_FANOUT',
  'WORKHORSE_MAX_GENERATION',
  'WORKHORSE_FANOUT_FUNCTION',
  'WORKHORSE_LAMBDA_ENDPOINT',
  'AWS_LAMBDA_FUNCTION_NAME',
  'WORKHORSE_BACKLOG_METRIC',
];

type Handler = (event: unknown, context: TickContext) => Promise<TickSummary>;

/**
 * Sets exactly these tick variables (the others unset) and imports the
 * shipped handler afresh, as a new Lambda container would.
 */
export async function freshHandler(vars: Record<string, string>): Promise<Handler> {
  for (const k of TICK_VARS) delete process.env[k];
  Object.assign(process.env, vars);
  vi.resetModules();
  const mod = (await import('../../handlers/tick.js')) as { handler: Handler };
  return mod.handler;
}

export async function jobStatuses(db: pg.Pool): Promise<Record<string, number>> {
  const r = await db.query<{ status: string; n: number }>('select status, count(*)::int as n from workhorse.jobs group by status');
  return Object.fromEntries(r.rows.map((x) => [x.status, x.n]));
}

/** Moves a slot's next cadence `secondsAgo` into the past (as if the fleet had been down). */
export async function backdateSlot(db: pg.Pool, name: string, secondsAgo: number): Promise<void> {
  await db.query(
    `update workhorse.schedules set next_run_at = date_trunc('milliseconds', now() - make_interval(secs => $2)) where name = $1`,
    [name, secondsAgo],
  );
}

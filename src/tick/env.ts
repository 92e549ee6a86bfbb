// The tick's environment variables, turned into tick options. Pure: the
// caller passes the environment (src/config.ts, the only module that reads
// the process's environment, passes it). Bounds are checked once more by the tick
// options schema; here each variable is parsed and named.
import * as z from 'zod';
import { envInteger } from '../envInteger.js';
import { parseConfig } from '../validation.js';
import type { TickOptions } from './options.js';

const int = envInteger();
/** A comma list; an empty entry (two commas in a row, or one at an end) is a mistake, not nothing. */
const list = z.string().transform((s, ctx) => {
  // Only spaces: neither unset (an empty variable is) nor a list; WORKHORSE_SCHEDULE_NAMESPACES read it as
  // "fire no slot", retention included, without a word.
  if (s.trim() === '') {
    ctx.addIssue({ code: 'custom', message: 'is only spaces: leave it empty or unset for the default, or name the entries' });
    return z.NEVER;
  }
  const entries = s.split(',').map((x) => x.trim());
  if (entries.includes('')) {
    ctx.addIssue({ code: 'custom', message: `"${s}" has an empty entry (two commas in a row, or one at an end)` });
    return z.NEVER;
  }
  return entries;
});
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

const tickEnvSchema = z.object({
  DATABASE_URL: z.string().min(1).optional(),
  WORKHORSE_NAMESPACE: z.string().optional(),
  /** Path or file URL of the compiled app module (handlers/tick.ts). */
  WORKHORSE_APP: z.string().min(1).optional(),
  WORKHORSE_HEARTBEAT_MS: int.optional(),
  WORKHORSE_SAFETY_MARGIN_MS: int.optional(),
  WORKHORSE_CONCURRENCY: int.optional(),
  WORKHORSE_QUEUES: list.optional(),
  WORKHORSE_UNTIL_EMPTY: bool.optional(),
  /** Report skipped jobs per job type in the tick summary. */
  WORKHORSE_SKIPS_BY_TYPE: bool.optional(),
  WORKHORSE_SCHEDULE_NAMESPACES: list.optional(),
  WORKHORSE_SCHEDULE_CATCHUP_LIMIT: int.optional(),
  WORKHORSE_RETENTION_MS: int.optional(),
  WORKHORSE_RETENTION_EVERY_MS: int.optional(),
  WORKHORSE_MAX_FANOUT: int.optional(),
  WORKHORSE_MAX_GENERATION: int.optional(),
  WORKHORSE_FANOUT_FUNCTION: z.string().min(1).optional(),
  WORKHORSE_LAMBDA_ENDPOINT: z.string().url().optional(),
  WORKHORSE_BUILD: z.string().min(1).optional(),
  /** Publish the Workhorse/ReadyBacklog metric (an EMF log line) after each tick. */
  WORKHORSE_BACKLOG_METRIC: bool.optional(),
  AWS_LAMBDA_FUNCTION_NAME: z.string().min(1).optional(),
});

/** The variables the tick reads (the HTTP function's ticks too). */
export const TICK_VARIABLES: readonly string[] = Object.keys(tickEnvSchema.shape);

/** Tick options from the environment, plus the app module to load. */
export interface TickEnv {
  options: Partial<Omit<TickOptions, 'app' | 'deadline'>>;
  appModule: string | undefined;
  /** Whether the Lambda handler publishes the ready-backlog metric. */
  backlogMetric: boolean;
}

export function parseTickEnv(env: Record<string, string | undefined>): TickEnv {
  // Empty variables count as unset.
  const picked = Object.fromEntries(TICK_VARIABLES.map((k) => [k, env[k] || undefined]));
  const e = parseConfig(tickEnvSchema, picked, 'environment');
  const options: TickEnv['options'] = {
    connectionString: e.DATABASE_URL,
    namespace: e.WORKHORSE_NAMESPACE,
    heartbeatMs: e.WORKHORSE_HEARTBEAT_MS,
    safetyMarginMs: e.WORKHORSE_SAFETY_MARGIN_MS,
    concurrency: e.WORKHORSE_CONCURRENCY,
    queues: e.WORKHORSE_QUEUES,
    untilEmpty: e.WORKHORSE_UNTIL_EMPTY,
    skipsByType: e.WORKHORSE_SKIPS_BY_TYPE,
    scheduleNamespaces: e.WORKHORSE_SCHEDULE_NAMESPACES,
    scheduleCatchupLimit: e.WORKHORSE_SCHEDULE_CATCHUP_LIMIT,
    retentionMs: e.WORKHORSE_RETENTION_MS,
    retentionEveryMs: e.WORKHORSE_RETENTION_EVERY_MS,
    maxFanout: e.WORKHORSE_MAX_FANOUT,
    maxGeneration: e.WORKHORSE_MAX_GENERATION,
    // Fan-out invokes this function itself unless told otherwise.
    fanoutFunction: e.WORKHORSE_FANOUT_FUNCTION ?? e.AWS_LAMBDA_FUNCTION_NAME,
    // On Lambda, alert metrics go to CloudWatch as EMF log lines unless the app says otherwise.
    alertMetrics: e.AWS_LAMBDA_FUNCTION_NAME ? true : undefined,
    lambdaEndpoint: e.WORKHORSE_LAMBDA_ENDPOINT,
    build: e.WORKHORSE_BUILD,
  };
  for (const k of Object.keys(options) as (keyof typeof options)[]) if (options[k] === undefined) delete options[k];
  return { options, appModule: e.WORKHORSE_APP, backlogMetric: e.WORKHORSE_BACKLOG_METRIC ?? false };
}

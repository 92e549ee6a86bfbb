// The alert rules and their thresholds, each with a default meant to be
// quiet on a healthy fleet. The conditions themselves are SQL
// (workhorse.alert_conditions_v1); this module names the rules, validates
// overrides and turns them into the JSON the SQL reads. `false` turns a
// rule off.
import * as z from 'zod';
import { DEAD_HEARTBEATS } from '../timing.js';

export const ALERT_RULES = [
  'backlog',
  'oldest_ready',
  'failure_rate',
  'dead_worker',
  'unhandled_type',
  'stuck_lease',
  'slot_missed',
  'held_xmin',
] as const;
export type AlertRule = (typeof ALERT_RULES)[number];

const ms = (max = 30 * 86_400_000) => z.number().int().min(0).max(max);

/** Each rule's thresholds; every field has a default. */
export const ruleSchemas = {
  /** Due ready jobs (not running) of one unpaused queue above `max`. */
  backlog: z.object({ max: z.number().int().min(0).default(10_000) }).strict(),
  /** The oldest due ready job of one unpaused queue has waited longer than `maxAgeMs`. */
  oldest_ready: z.object({ maxAgeMs: ms().default(300_000) }).strict(),
  /** Over `windowMs`, more than `maxRate` of a type's runs failed, with at least `minFailures` failures. */
  failure_rate: z
    .object({ windowMs: ms().min(1000).default(900_000), maxRate: z.number().min(0).max(1).default(0.5), minFailures: z.number().int().min(1).default(10) })
    .strict(),
  /**
   * A registered worker missed this many of its heartbeats without
   * deregistering. At most 7: recovery marks a worker dead after 7 missed
   * heartbeats (the rule reports it then, whatever the threshold) and removes
   * its row a minute later, so a larger count could never be waited for.
   */
  dead_worker: z
    .object({
      missedHeartbeats: z
        .number()
        .int()
        .min(1)
        .max(DEAD_HEARTBEATS, `at most ${DEAD_HEARTBEATS}: a worker is marked dead after ${DEAD_HEARTBEATS} missed heartbeats and its row removed soon after`)
        .default(4),
    })
    .strict(),
  /** Ready jobs of a (queue, type) no live worker claims, due for longer than `minAgeMs`. */
  unhandled_type: z.object({ minAgeMs: ms().default(120_000) }).strict(),
  /** A lease expired more than `graceMs` ago and no recovery pass took it back. */
  stuck_lease: z.object({ graceMs: ms().default(60_000) }).strict(),
  /** An enabled slot overdue by `cadences` of its interval (cron slots: by `cronGraceMs`). */
  slot_missed: z.object({ cadences: z.number().int().min(1).max(1000).default(3), cronGraceMs: ms().default(900_000) }).strict(),
  /** A transaction of this database open longer than `maxAgeMs` with a snapshot, or a replication slot's xmin older than `maxSlotXidAge` transactions. */
  held_xmin: z
    .object({ maxAgeMs: ms().default(300_000), maxSlotXidAge: z.number().int().min(0).max(2_000_000_000).default(10_000_000) })
    .strict(),
} satisfies Record<AlertRule, z.ZodType>;

export type AlertThresholds = { [R in AlertRule]?: false | z.input<(typeof ruleSchemas)[R]> };
export type ResolvedThresholds = Record<string, Record<string, number>>;

export const thresholdsSchema = z
  .object(
    Object.fromEntries(ALERT_RULES.map((r) => [r, z.union([z.literal(false), ruleSchemas[r]]).optional()])) as {
      [R in AlertRule]: z.ZodOptional<z.ZodUnion<[z.ZodLiteral<false>, (typeof ruleSchemas)[R]]>>;
    },
  )
  .strict()
  .default({});

/** Every rule not turned off, with its thresholds filled in: the JSON evaluate_alerts_v1 takes. */
export function resolveThresholds(t: z.output<typeof thresholdsSchema>): ResolvedThresholds {
  const out: ResolvedThresholds = {};
  for (const r of ALERT_RULES) {
    const v = t[r];
    if (v === false) continue;
    out[r] = ruleSchemas[r].parse(v ?? {}) as Record<string, number>;
  }
  return out;
}

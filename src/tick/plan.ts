// The tick's timeline, fixed at its start from the deadline and the safety
// margin: claims stop at `closeAt` (deadline - margin), a claimed job's
// timeout must fit before `closeAt`, handlers still running at `abortAt`
// (halfway through the margin) are aborted, and the rest of the margin is for
// settling, deregistering and closing connections. Bad timings (too little
// time, or more than a tick can hold) are configuration errors, raised
// before any connection opens.
import { ConfigError } from '../errors.js';
import { DEFAULT_TICK_HEARTBEAT_MS } from './options.js';

/**
 * The longest time a tick may have (2^31 - 1 ms): its registry deadline is
 * an integer number of milliseconds in tick_start_v2, and Node's timers fire
 * at once for a longer delay.
 */
export const MAX_TICK_BUDGET_MS = 2_147_483_647;

export interface TickPlan {
  /** The configured heartbeat, or the default fitted to the time limit. */
  heartbeatMs: number;
  startedAt: number;
  deadline: number;
  closeAt: number;
  abortAt: number;
  budgetMs: number;
  marginMs: number;
}

export function planTick(
  o: { deadline: Date; safetyMarginMs: number; heartbeatMs?: number | undefined },
  now = Date.now(),
): TickPlan {
  const deadline = o.deadline.getTime();
  const budgetMs = deadline - now;
  if (budgetMs <= o.safetyMarginMs) {
    const message = `the tick has ${budgetMs} ms left, not more than its safety margin of ${o.safetyMarginMs} ms; lower the margin (--safety-margin-ms, WORKHORSE_SAFETY_MARGIN_MS or safetyMarginMs) or give the tick more time`;
    throw new ConfigError(`invalid tick timing: ${message}`, [{ path: ['safetyMarginMs'], message }]);
  }
  if (budgetMs > MAX_TICK_BUDGET_MS) {
    const message = `the tick has ${budgetMs} ms left, more than the longest a tick can run (${MAX_TICK_BUDGET_MS} ms, about 24.8 days: its deadline is stored and timed in 32-bit milliseconds); give it an earlier deadline`;
    throw new ConfigError(`invalid tick timing: ${message}`, [{ path: ['deadline'], message }]);
  }
  if (o.heartbeatMs !== undefined && o.heartbeatMs >= budgetMs) {
    const message = `heartbeatMs (${o.heartbeatMs}) must be shorter than the tick's time limit (${budgetMs} ms); lower it (--heartbeat-ms, WORKHORSE_HEARTBEAT_MS or heartbeatMs)`;
    throw new ConfigError(`invalid tick timing: ${message}`, [{ path: ['heartbeatMs'], message }]);
  }
  return {
    heartbeatMs: o.heartbeatMs ?? Math.max(50, Math.min(DEFAULT_TICK_HEARTBEAT_MS, Math.floor(budgetMs / 4))),
    startedAt: now,
    deadline,
    closeAt: deadline - o.safetyMarginMs,
    abortAt: deadline - Math.floor(o.safetyMarginMs / 2),
    budgetMs,
    marginMs: o.safetyMarginMs,
  };
}

/** Milliseconds a job claimed now may take: the time left before claims stop. */
export function claimableMs(plan: TickPlan, now = Date.now()): number {
  return Math.floor(plan.closeAt - now);
}

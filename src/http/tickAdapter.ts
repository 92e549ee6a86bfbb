// Binds POST /tick to the real runTick: the request's budget becomes the
// tick's deadline, and the tick borrows the HTTP client's pool (at most 2
// of its connections) instead of opening its own. For short budgets the
// heartbeat and safety margin shrink to fit, so any budget the route allows
// is a valid tick: the margin to a quarter of the budget, but never below
// TIGHT_MARGIN_MS (unless configured lower), which the route's least budget
// leaves room for: a margin of a few tens of ms could not write the aborted
// handlers' outcomes, nor deregister, and the tick then failed as if the
// database had not answered. The settings are checked when the runner is built, so a
// bad tick variable (WORKHORSE_CONCURRENCY=0) stops the server at start-up
// with a ConfigError instead of failing every POST /tick with a 500.
import type { WorkhorseApp } from '../app/defineApp.js';
import type { Client } from '../client/client.js';
import { DEFAULT_SAFETY_MARGIN_MS, DEFAULT_TICK_HEARTBEAT_MS, TIGHT_MARGIN_MS, tickOptionsSchema, type TickOptions } from '../tick/options.js';
import { parseConfig } from '../validation.js';
import { runTick } from '../tick/runTick.js';
import type { TickRunner } from './tickRunner.js';

/** Tick settings an HTTP tick may take from its environment; the database and deadline are its own. */
export type HttpTickOptions = Partial<Omit<TickOptions, 'app' | 'deadline' | 'pool' | 'connectionString' | 'namespace' | 'generation'>>;

/** With no app module, a tick still runs recovery and the built-in slots. */
const NO_JOBS: WorkhorseApp = { jobs: [], configure() {} };

export function tickRunnerFor(client: Client, app: WorkhorseApp | undefined, tickOptions: HttpTickOptions = {}): TickRunner {
  // The environment's tick settings carry the database and namespace too; the client's win.
  const { connectionString: _url, namespace: _ns, pool: _pool, ...options } = tickOptions as Partial<TickOptions>;
  parseConfig(tickOptionsSchema, { ...options, app: app ?? NO_JOBS, pool: client.pool, namespace: client.namespace, deadline: new Date() }, 'tick options');
  return ({ budgetMs }) =>
    runTick({
      ...options,
      app: app ?? NO_JOBS,
      pool: client.pool,
      namespace: client.namespace,
      deadline: new Date(Date.now() + budgetMs),
      ...httpTickTiming(budgetMs, options),
    });
}

/** The heartbeat and safety margin of a tick of `budgetMs`, fitted to it; configured values are upper bounds. */
export function httpTickTiming(budgetMs: number, configured: { heartbeatMs?: number; safetyMarginMs?: number } = {}): { heartbeatMs: number; safetyMarginMs: number } {
  return {
    heartbeatMs: Math.max(50, Math.min(configured.heartbeatMs ?? DEFAULT_TICK_HEARTBEAT_MS, Math.floor(budgetMs / 2))),
    safetyMarginMs: Math.min(configured.safetyMarginMs ?? DEFAULT_SAFETY_MARGIN_MS, Math.max(Math.floor(budgetMs / 4), Math.min(TIGHT_MARGIN_MS, Math.floor(budgetMs / 2)))),
  };
}

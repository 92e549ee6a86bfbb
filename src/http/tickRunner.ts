// What POST /tick needs from the tick: a function that runs one tick within a
// budget and returns its summary. createApp takes it as a dependency so the
// HTTP layer stays independent of how a tick is built (handlers/http.ts and
// `workhorse serve` pass the real runTick).
import type { TickSummary } from '../tick/summary.js';

export type { TickSummary };

export interface TickRequest {
  /** Wall-clock budget of this tick in milliseconds, from the request's own time limit. */
  budgetMs: number;
}

export type TickRunner = (request: TickRequest) => Promise<TickSummary>;

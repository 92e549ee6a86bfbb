// POST /tick: runs one tick within the request's budget and answers with its
// summary. Only an HMAC-signed request gets here; anything else is a 401 and
// runs nothing. The optional body `{ "budgetMs": n }` can shorten the budget,
// never lengthen it past the server's setting or Lambda's time left.
import { Hono } from 'hono';
import * as z from 'zod';
import { MIN_TICK_BUDGET_MS } from '../../config.js';
import { parseInput } from '../../validation.js';
import { readJson } from '../body.js';
import type { HttpEnv } from '../env.js';
import { errorResponse } from '../middleware/errorHandler.js';
import type { RouteDeps } from './deps.js';

/** Time kept back on Lambda to write the response after the tick returns. */
export const LAMBDA_RESPONSE_MARGIN_MS = 1000;

const tickBodySchema = z
  .object({ budgetMs: z.number().int().min(MIN_TICK_BUDGET_MS).max(900_000).optional() })
  .strict()
  .optional();

export function tickRoutes(d: RouteDeps): Hono<HttpEnv> {
  const r = new Hono<HttpEnv>();
  r.post('/', d.signed, async (c) => {
    const body = parseInput(tickBodySchema, readJson(c), 'tick request');
    let budgetMs = Math.min(body?.budgetMs ?? d.config.tickBudgetMs, d.config.tickBudgetMs);
    const lambda = c.env?.lambdaContext;
    if (lambda && typeof lambda.getRemainingTimeInMillis === 'function') {
      // A context whose answer is not a number (a hand-made one) cannot lower the budget.
      const left = lambda.getRemainingTimeInMillis();
      if (Number.isFinite(left)) budgetMs = Math.min(budgetMs, left - LAMBDA_RESPONSE_MARGIN_MS);
    }
    if (budgetMs < MIN_TICK_BUDGET_MS) {
      return errorResponse(c, 503, { code: 'no_time_left', message: 'the invocation has too little time left to run a tick' });
    }
    const summary = await d.config.tick({ budgetMs });
    return c.json(summary);
  });
  return r;
}

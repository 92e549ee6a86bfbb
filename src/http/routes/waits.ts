// The durable-wait resources: signals to a job or to a key (scope
// `signal`), and human decisions: the list of what waits for people (scope
// `read` or `decide`) and the decision itself (scope `decide`). A decision records who made it: the
// body's `by`, or else the credential's name. Every route is one client call;
// bad input is a typed 400, a choice outside the wait's choices too.
import { Hono } from 'hono';
import * as z from 'zod';
import type { Client } from '../../client/client.js';
import { decisionInputSchema } from '../../client/durableClient.js';
import { encodePayload } from '../../client/enqueueInput.js';
import { ValidationError } from '../../errors.js';
import { jobIdStringSchema, jobTypeSchema, queueNameSchema, signalKeySchema, waitNameSchema } from '../../names.js';
import { parseInput } from '../../validation.js';
import { readJson, readQuery } from '../body.js';
import type { HttpEnv } from '../env.js';
import { pathParams } from '../pathParams.js';
import type { RouteDeps } from './deps.js';

const jobWaitParams = z.object({ id: jobIdStringSchema, name: waitNameSchema });
const keyParams = z.object({ key: signalKeySchema, name: waitNameSchema });
/** The body is `{ payload }`; none (or an empty body) sends a null payload. */
const signalBody = z.object({ payload: z.unknown().optional() }).strict().optional();
const decisionBody = decisionInputSchema.extend({ by: decisionInputSchema.shape.by.optional() });
const decisionsQuery = z
  .object({
    queue: queueNameSchema.optional(),
    type: jobTypeSchema.optional(),
    limit: z
      .string()
      .regex(/^[0-9]{1,4}$/, 'limit is a whole number of at most 4 digits')
      .transform(Number)
      .optional(),
  })
  .strict();

/**
 * The signal's payload, checked as the client will check it (what the
 * database cannot store, the size limit) but with issue paths relative to
 * the body: `["payload", "a"]`, as every other route's.
 */
function signalPayload(client: Client, name: string, body: { payload?: unknown } | undefined): unknown {
  try {
    encodePayload(`signal "${name}"`, body?.payload, client.maxPayloadBytes);
  } catch (err) {
    if (err instanceof ValidationError) throw new ValidationError(err.message, err.issues.map((i) => ({ ...i, path: ['payload', ...i.path] })));
    throw err;
  }
  return body?.payload;
}

/** Mounted at /jobs: POST /jobs/:id/signals/:name and POST /jobs/:id/decisions/:name. */
export function jobWaitRoutes(d: RouteDeps): Hono<HttpEnv> {
  const { client } = d;
  const r = new Hono<HttpEnv>();

  r.post('/:id/signals/:name', d.guard('signal'), async (c) => {
    const { id, name } = parseInput(jobWaitParams, pathParams(c), 'path');
    const body = parseInput(signalBody, readJson(c), 'body');
    return c.json(await client.signal(id, name, signalPayload(client, name, body)), 202);
  });

  r.post('/:id/decisions/:name', d.guard('decide'), async (c) => {
    const { id, name } = parseInput(jobWaitParams, pathParams(c), 'path');
    const body = parseInput(decisionBody, readJson(c), 'body');
    const decision = await client.decide(id, name, { ...body, by: body.by ?? c.get('principal').name });
    return c.json(decision);
  });

  return r;
}

/** Mounted at /signals: POST /signals/:key/:name. */
export function signalRoutes(d: RouteDeps): Hono<HttpEnv> {
  const r = new Hono<HttpEnv>();
  r.post('/:key/:name', d.guard('signal'), async (c) => {
    const { key, name } = parseInput(keyParams, pathParams(c), 'path');
    const body = parseInput(signalBody, readJson(c), 'body');
    return c.json(await d.client.signalKey(key, name, signalPayload(d.client, name, body)), 202);
  });
  return r;
}

/** Mounted at /decisions: GET /decisions. */
export function decisionRoutes(d: RouteDeps): Hono<HttpEnv> {
  const r = new Hono<HttpEnv>();
  // `read` sees every wait in GET /jobs/:id anyway; `decide` alone lets an
  // approvals app list what it may decide.
  r.get('/', d.guard(['read', 'decide']), async (c) => {
    const q = parseInput(decisionsQuery, readQuery(c), 'query');
    return c.json({ decisions: await d.client.pendingDecisions(q) });
  });
  return r;
}

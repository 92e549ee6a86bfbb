// The jobs resource: enqueue (one or a batch), read one, list with keyset
// pagination, cancel and retry. Every route is one client call, guarded by
// the scope it needs: `enqueue`, `read` or `admin`.
import { Hono } from 'hono';
import * as z from 'zod';
import { cancelledOrConflict } from '../../client/cancelRefusal.js';
import type { Client, EnqueueManyItem, EnqueueResult } from '../../client/client.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import { jobIdStringSchema } from '../../names.js';
import { parseInput } from '../../validation.js';
import { readJson, readNoBody, readQuery } from '../body.js';
import type { HttpEnv } from '../env.js';
import { parseEnqueueBody } from '../jobInput.js';
import { pathParams } from '../pathParams.js';
import { cursorParam, limitParam, noQuery } from '../queryParams.js';
import type { RouteDeps } from './deps.js';
import type { ListJobsFilter } from '../../client/admin.js';

const idParams = z.object({ id: jobIdStringSchema });
/** POST /jobs/:id/cancel's optional body: keep the job's unfinished children running. */
const cancelBody = z.object({ keepChildren: z.boolean().optional() }).strict().optional();

const listQuery = z
  .object({
    status: z.string().optional(),
    queue: z.string().optional(),
    type: z.string().optional(),
    limit: limitParam,
    cursor: cursorParam,
  })
  .strict();

export function jobRoutes(d: RouteDeps): Hono<HttpEnv> {
  const { client } = d;
  const r = new Hono<HttpEnv>();

  r.post('/', d.guard('enqueue'), async (c) => {
    const { batch, items } = parseEnqueueBody(client, readJson(c));
    const results = batch ? await enqueueBatch(client, items) : [await client.enqueue(items[0]!.job, items[0]!.payload, items[0]!.options)];
    const status = results.some((x) => x.created) ? 201 : 200;
    return batch ? c.json({ jobs: results }, status) : c.json(results[0]!, status);
  });

  r.get('/', d.guard('read'), async (c) => {
    const q = parseInput(listQuery, readQuery(c), 'query');
    // The status is checked by listJobs itself (its message names the statuses): any string goes through here.
    return c.json(await client.admin.listJobs(q as ListJobsFilter));
  });

  r.get('/:id', d.guard('read'), async (c) => {
    const { id } = parseInput(idParams, pathParams(c), 'path');
    parseInput(noQuery, readQuery(c), 'query');
    const job = await client.getJob(id);
    if (!job) throw new NotFoundError(`job ${id} not found in namespace "${client.namespace}"`);
    return c.json(job);
  });

  r.post('/:id/cancel', d.guard('admin'), async (c) => {
    const { id } = parseInput(idParams, pathParams(c), 'path');
    const body = parseInput(cancelBody, readJson(c), 'body');
    return c.json(cancelledOrConflict(await client.cancel(id, { keepChildren: body?.keepChildren ?? false })));
  });

  r.post('/:id/retry', d.guard('admin'), async (c) => {
    const { id } = parseInput(idParams, pathParams(c), 'path');
    readNoBody(c);
    return c.json(await client.retry(id));
  });

  return r;
}

/**
 * A batch, its refusals named by their place in the body: what only the
 * insert checks (a backoff override against its definition's) came back as
 * "item 2: ..." at [2, ...], where every other issue is at ["jobs", 2, ...].
 */
async function enqueueBatch(client: Client, items: EnqueueManyItem[]): Promise<EnqueueResult[]> {
  try {
    return await client.enqueueMany(items);
  } catch (err) {
    if (!(err instanceof ValidationError) || !err.issues.some((i) => typeof i.path[0] === 'number')) throw err;
    throw new ValidationError(
      err.message.replace(/^item (\d+): /, 'jobs.$1: '),
      err.issues.map((i) => (typeof i.path[0] === 'number' ? { ...i, path: ['jobs', ...i.path] } : i)),
      { cause: err },
    );
  }
}

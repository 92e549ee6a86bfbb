// The queues resource: list with counts (failed and cancelled too) and policy (`read`), durable pause /
// resume (`admin`). Only a queue that exists can be paused or resumed, so a
// client cannot create policy rows without bound: one that holds jobs
// (finished ones too) or has a policy row, the queue of a job type the app
// defines, or `sys` (the built-in slots'), as the CLI has it
// (client/knownQueue.ts). Any other name is 404; `client.admin.setQueueLimits`
// creates a queue's row explicitly.
import { Hono } from 'hono';
import * as z from 'zod';
import type { Client } from '../../client/client.js';
import { isKnownQueue } from '../../client/knownQueue.js';
import { listQueuesWithDead } from '../../client/queueListing.js';
import { NotFoundError } from '../../errors.js';
import { queueNameSchema } from '../../names.js';
import { parseInput } from '../../validation.js';
import { readNoBody, readQuery } from '../body.js';
import type { HttpEnv } from '../env.js';
import { pathParams } from '../pathParams.js';
import { noQuery } from '../queryParams.js';
import type { RouteDeps } from './deps.js';

const nameParams = z.object({ name: queueNameSchema });

export async function existingQueue(client: Client, param: Record<string, string>): Promise<string> {
  const { name } = parseInput(nameParams, param, 'path');
  if (await isKnownQueue(client, name)) return name;
  throw new NotFoundError(`queue "${name}" does not exist in namespace "${client.namespace}": it holds no job, has no policy row, and no job type of this server's app uses it; client.admin.pauseQueue pauses any name in code`);
}

export function queueRoutes(d: RouteDeps): Hono<HttpEnv> {
  const { client } = d;
  const r = new Hono<HttpEnv>();
  r.get('/', d.guard('read'), async (c) => {
    parseInput(noQuery, readQuery(c), 'query');
    return c.json({ queues: await listQueuesWithDead(client) });
  });
  r.post('/:name/pause', d.guard('admin'), async (c) => {
    readNoBody(c);
    const name = await existingQueue(client, pathParams(c));
    await client.admin.pauseQueue(name);
    return c.json({ name, paused: true });
  });
  r.post('/:name/resume', d.guard('admin'), async (c) => {
    readNoBody(c);
    const name = await existingQueue(client, pathParams(c));
    await client.admin.resumeQueue(name);
    return c.json({ name, paused: false });
  });
  return r;
}

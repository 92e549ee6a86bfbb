// The workers resource: the registry (`read`), and the operator pause a
// worker picks up on its next heartbeat (`admin`).
import { Hono } from 'hono';
import * as z from 'zod';
import { workerIdSchema } from '../../names.js';
import { parseInput } from '../../validation.js';
import { readNoBody, readQuery } from '../body.js';
import type { HttpEnv } from '../env.js';
import { pathParams } from '../pathParams.js';
import { noQuery } from '../queryParams.js';
import type { RouteDeps } from './deps.js';

const idParams = z.object({ id: workerIdSchema });

export function workerRoutes(d: RouteDeps): Hono<HttpEnv> {
  const { admin } = d.client;
  const r = new Hono<HttpEnv>();
  r.get('/', d.guard('read'), async (c) => {
    parseInput(noQuery, readQuery(c), 'query');
    return c.json({ workers: await admin.listWorkers() });
  });
  r.post('/:id/pause', d.guard('admin'), async (c) => {
    const { id } = parseInput(idParams, pathParams(c), 'path');
    readNoBody(c);
    await admin.setWorkerPaused(id, true);
    return c.json({ id, paused: true });
  });
  r.post('/:id/resume', d.guard('admin'), async (c) => {
    const { id } = parseInput(idParams, pathParams(c), 'path');
    readNoBody(c);
    await admin.setWorkerPaused(id, false);
    return c.json({ id, paused: false });
  });
  return r;
}

// The alerts resource: what sys.alerts opened and resolved (`read`).
import { Hono } from 'hono';
import * as z from 'zod';
import { parseInput } from '../../validation.js';
import { readQuery } from '../body.js';
import type { HttpEnv } from '../env.js';
import { choiceParam, limitParam } from '../queryParams.js';
import type { RouteDeps } from './deps.js';

const listQuery = z
  .object({
    state: choiceParam(['open', 'resolved']),
    limit: limitParam,
  })
  .strict();

export function alertRoutes(d: RouteDeps): Hono<HttpEnv> {
  const r = new Hono<HttpEnv>();
  r.get('/', d.guard('read'), async (c) => {
    const q = parseInput(listQuery, readQuery(c), 'query');
    return c.json({ alerts: await d.client.alerts(q) });
  });
  return r;
}

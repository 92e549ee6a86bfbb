// The schedules resource: the recurring slots of this namespace, read-only
// (`read`).
// Listed through the schedules API unless createApp was given another source.
import { Hono } from 'hono';
import { Schedules } from '../../schedules/schedules.js';
import { parseInput } from '../../validation.js';
import { readQuery } from '../body.js';
import type { HttpEnv } from '../env.js';
import { noQuery } from '../queryParams.js';
import type { RouteDeps } from './deps.js';

export function scheduleRoutes(d: RouteDeps): Hono<HttpEnv> {
  const schedules = new Schedules(d.client);
  const list = d.config.listSchedules ?? (() => schedules.list());
  const r = new Hono<HttpEnv>();
  r.get('/', d.guard('read'), async (c) => {
    parseInput(noQuery, readQuery(c), 'query');
    return c.json({ schedules: await list() });
  });
  return r;
}

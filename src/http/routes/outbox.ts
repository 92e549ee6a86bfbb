// The outbox resource: list events (`read`), retry dead ones and discard
// pending or dead ones (`admin`). Each route is one client call.
import { Hono } from 'hono';
import * as z from 'zod';
import { parseInput } from '../../validation.js';
import { readJson, readQuery } from '../body.js';
import type { HttpEnv } from '../env.js';
import { cursorParam, limitParam } from '../queryParams.js';
import type { RouteDeps } from './deps.js';

const listQuery = z
  .object({
    state: z.string().optional(),
    topic: z.string().optional(),
    limit: limitParam,
    cursor: cursorParam,
  })
  .strict();

const idsBody = z.object({ ids: z.array(z.union([z.string(), z.number().int()])).min(1).max(1000) }).strict();

export function outboxRoutes(d: RouteDeps): Hono<HttpEnv> {
  const { outbox } = d.client;
  const r = new Hono<HttpEnv>();
  r.get('/', d.guard('read'), async (c) => {
    const q = parseInput(listQuery, readQuery(c), 'query');
    return c.json({ events: await outbox.list(q as never) });
  });
  r.post('/retry', d.guard('admin'), async (c) => {
    const { ids } = parseInput(idsBody, readJson(c), 'body');
    return c.json({ retried: await outbox.retry(ids) });
  });
  r.post('/discard', d.guard('admin'), async (c) => {
    const { ids } = parseInput(idsBody, readJson(c), 'body');
    return c.json({ discarded: await outbox.discard(ids) });
  });
  return r;
}

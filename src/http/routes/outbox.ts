// The outbox resource: list events (`read`), retry dead ones and discard
// pending or dead ones (`admin`). Each route is one client call.
import { Hono } from 'hono';
import * as z from 'zod';
import { bigintIdString } from '../../storable.js';
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

/** Ids as strings or whole numbers, each checked here so an issue's path is relative to the body (`["ids", 2]`). */
const eventId = z
  .union([z.string(), z.number().int()], { error: 'an event id is a positive integer: a string of digits or a whole number' })
  .transform(String)
  .pipe(bigintIdString('event id'));
const idsBody = z.object({ ids: z.array(eventId).min(1).max(1000) }).strict();

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

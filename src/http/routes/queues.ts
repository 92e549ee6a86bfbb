// The queues resource: list with counts and policy, durable pause / resume.
import { Hono } from 'hono';
import type { HttpEnv } from '../env.js';
import { requireApiAuth } from '../middleware/auth.js';
import type { RouteDeps } from './deps.js';

export function queueRoutes(d: RouteDeps): Hono<HttpEnv> {
  const { admin } = d.client;
  const r = new Hono<HttpEnv>();
  r.use('*', requireApiAuth(d.auth));
  r.get('/', async (c) => c.json({ queues: await admin.listQueues() }));
  r.post('/:name/pause', async (c) => {
    const name = c.req.param('name');
    await admin.pauseQueue(name);
    return c.json({ name, paused: true });
  });
  r.post('/:name/resume', async (c) => {
    const name = c.req.param('name');
    await admin.resumeQueue(name);
    return c.json({ name, paused: false });
  });
  return r;
}

// The workers resource: the registry, and the operator pause a worker picks
// up on its next heartbeat.
import { Hono } from 'hono';
import type { HttpEnv } from '../env.js';
import { requireApiAuth } from '../middleware/auth.js';
import type { RouteDeps } from './deps.js';

export function workerRoutes(d: RouteDeps): Hono<HttpEnv> {
  const { admin } = d.client;
  const r = new Hono<HttpEnv>();
  r.use('*', requireApiAuth(d.auth));
  r.get('/', async (c) => c.json({ workers: await admin.listWorkers() }));
  r.post('/:id/pause', async (c) => {
    const id = c.req.param('id');
    await admin.setWorkerPaused(id, true);
    return c.json({ id, paused: true });
  });
  r.post('/:id/resume', async (c) => {
    const id = c.req.param('id');
    await admin.setWorkerPaused(id, false);
    return c.json({ id, paused: false });
  });
  return r;
}

// GET /healthz, unauthenticated for load balancers: 200 when the database
// answers and its schema is the version this code expects, 503 otherwise.
// It says which of the two failed and nothing more; a database that did
// not answer carries Retry-After, as on every route. The probe has its own
// one-connection pool and a cached answer (src/http/healthCheck.ts), so it
// stays fast when the API's pool is busy.
import { Hono } from 'hono';
import type { HttpEnv } from '../env.js';
import type { HealthCheck } from '../healthCheck.js';
import { errorResponse, UNREACHABLE_RETRY_AFTER } from '../middleware/errorHandler.js';
import type { RouteDeps } from './deps.js';

export function healthRoutes(d: RouteDeps, health: HealthCheck): Hono<HttpEnv> {
  const r = new Hono<HttpEnv>();
  r.get('/', async (c) => {
    const status = await health.check();
    if (!status.ok) {
      // Like every route's database_unreachable, but not logged: probes come every few seconds.
      if (status.code === 'database_unreachable') c.header('Retry-After', UNREACHABLE_RETRY_AFTER);
      return errorResponse(c, 503, { code: status.code, message: status.message });
    }
    return c.json({ ok: true, schemaVersion: status.schemaVersion, namespace: d.client.namespace });
  });
  return r;
}

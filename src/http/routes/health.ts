// GET /healthz, unauthenticated for load balancers: 200 when the database
// answers and its schema is the version this code expects, 503 otherwise.
// It says which of the two failed and nothing more.
import { Hono } from 'hono';
import { readSchemaVersion } from '../../db/migrate.js';
import { SCHEMA_VERSION } from '../../db/schemaVersion.js';
import type { HttpEnv } from '../env.js';
import { errorResponse } from '../middleware/errorHandler.js';
import type { RouteDeps } from './deps.js';

export function healthRoutes(d: RouteDeps): Hono<HttpEnv> {
  const r = new Hono<HttpEnv>();
  r.get('/', async (c) => {
    let version: number | null;
    try {
      version = await readSchemaVersion(d.client.pool);
    } catch {
      return errorResponse(c, 503, { code: 'database_unreachable', message: 'the database did not answer' });
    }
    if (version !== SCHEMA_VERSION) {
      return errorResponse(c, 503, {
        code: 'schema_version',
        message: `schema version is ${version ?? 'missing'}; this code expects ${SCHEMA_VERSION}`,
      });
    }
    return c.json({ ok: true, schemaVersion: version, namespace: d.client.namespace });
  });
  return r;
}

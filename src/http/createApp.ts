// createApp: the workhorse HTTP API as a Hono app, one module per resource.
// The same app runs on Lambda (handlers/http.ts) and on Node (`workhorse
// serve`). Every request body is read once under the size limit; every error
// is `{ error: { code, message, issues? } }`.
import { Hono } from 'hono';
import { parseHttpAppConfig, type HttpAppConfig } from './appConfig.js';
import type { HttpEnv } from './env.js';
import type { AuthSettings } from './middleware/auth.js';
import { errorHandler, notFoundHandler } from './middleware/errorHandler.js';
import { readBody } from './middleware/readBody.js';
import type { RouteDeps } from './routes/deps.js';
import { healthRoutes } from './routes/health.js';
import { jobRoutes } from './routes/jobs.js';
import { queueRoutes } from './routes/queues.js';
import { scheduleRoutes } from './routes/schedules.js';
import { tickRoutes } from './routes/tick.js';
import { workerRoutes } from './routes/workers.js';

export function createApp(config: HttpAppConfig): Hono<HttpEnv> {
  const c = parseHttpAppConfig(config);
  for (const def of c.app?.jobs ?? []) c.client.define(def);
  const auth: AuthSettings = { signingSecrets: c.signingSecrets, apiToken: c.apiToken, toleranceSec: c.toleranceSec, now: c.now ?? Date.now };
  const deps: RouteDeps = { client: c.client, auth, config: c };
  const log = c.log ?? ((message: string, err: unknown) => console.error(message, err));

  const app = new Hono<HttpEnv>();
  app.onError(errorHandler(log));
  app.notFound(notFoundHandler);
  app.use('*', readBody(c.maxBodyBytes));
  app.route('/healthz', healthRoutes(deps));
  app.route('/tick', tickRoutes(deps));
  app.route('/jobs', jobRoutes(deps));
  app.route('/queues', queueRoutes(deps));
  app.route('/workers', workerRoutes(deps));
  app.route('/schedules', scheduleRoutes(deps));
  return app;
}

// createApp: the workhorse HTTP API as a Hono app, one module per resource.
// The same app runs on Lambda (handlers/http.ts) and on Node (`workhorse
// serve`). Each route declares the scope it needs; credentials are checked
// from the headers before a body byte is read, and bodies are read once,
// under the size, time and concurrency limits. Every error is
// `{ error: { code, message, issues? } }`; a known path with the wrong
// method is 405, an unknown one 404.
import { Hono } from 'hono';
import { parseHttpAppConfig, type HttpAppConfig } from './appConfig.js';
import { BodyReader, signedBodyReads } from './bodyReader.js';
import type { HttpEnv } from './env.js';
import { createHealthCheck } from './healthCheck.js';
import { allowedMethods } from './methods.js';
import { requireScope, requireSignature, type AuthSettings, type Bodies } from './middleware/auth.js';
import { apiHeaders } from './middleware/apiHeaders.js';
import { errorHandler, notFoundHandler } from './middleware/errorHandler.js';
import { alertRoutes } from './routes/alerts.js';
import { dashboardRoutes } from './routes/dashboard.js';
import type { RouteDeps } from './routes/deps.js';
import { healthRoutes } from './routes/health.js';
import { jobRoutes } from './routes/jobs.js';
import { outboxRoutes } from './routes/outbox.js';
import { queueRoutes } from './routes/queues.js';
import { scheduleRoutes } from './routes/schedules.js';
import { tickRoutes } from './routes/tick.js';
import { workerRoutes } from './routes/workers.js';
import { decisionRoutes, jobWaitRoutes, signalRoutes } from './routes/waits.js';

export function createApp(config: HttpAppConfig): Hono<HttpEnv> {
  const c = parseHttpAppConfig(config);
  for (const def of c.app?.jobs ?? []) c.client.define(def);
  const auth: AuthSettings = {
    signingSecrets: c.signingSecrets,
    tokens: c.tokens,
    signedScopes: c.signedScopes,
    toleranceSec: c.toleranceSec,
    now: c.now ?? Date.now,
  };
  const limits = { maxBytes: c.maxBodyBytes, timeoutMs: c.bodyTimeoutMs };
  const bodies: Bodies = {
    verified: new BodyReader({ ...limits, maxConcurrent: c.maxBodyReads }),
    signed: new BodyReader({ ...limits, maxConcurrent: signedBodyReads(c.maxBodyReads) }),
  };
  const deps: RouteDeps = {
    client: c.client,
    config: c,
    guard: (scope) => requireScope(auth, bodies, scope),
    signed: requireSignature(auth, bodies),
  };
  const health = c.health ?? createHealthCheck({ poolConfig: c.client.pool.options });
  const log = c.log ?? ((message: string, err: unknown) => console.error(message, err));

  const app = new Hono<HttpEnv>();
  app.onError(errorHandler(log));
  app.use('*', apiHeaders());
  // A known path asked with another method is a 405 naming the ones it has.
  app.notFound(notFoundHandler(allowedMethods(app)));
  app.route('/healthz', healthRoutes(deps, health));
  app.route('/tick', tickRoutes(deps));
  app.route('/jobs', jobRoutes(deps));
  app.route('/jobs', jobWaitRoutes(deps));
  app.route('/signals', signalRoutes(deps));
  app.route('/decisions', decisionRoutes(deps));
  app.route('/queues', queueRoutes(deps));
  app.route('/workers', workerRoutes(deps));
  app.route('/schedules', scheduleRoutes(deps));
  app.route('/outbox', outboxRoutes(deps));
  app.route('/alerts', alertRoutes(deps));
  app.route('/ui', dashboardRoutes(deps));
  return app;
}

// The fleet demo's dashboard: the real HTTP app's /ui on the demo's
// namespace, served while the story runs, so a newcomer watches the claim,
// the kill, the recovery, the gate and the rolling deploy happen in the
// table. It makes one admin token and one session secret per run (printed
// by the command, never stored) and listens on loopback unless told.
import { randomBytes } from 'node:crypto';
import { serve } from '@hono/node-server';
import { createClient } from '../client/client.js';
import { answerClientErrors } from '../http/clientErrors.js';
import { createApp } from '../http/createApp.js';
import { answerUnmetExpectations } from '../http/expectations.js';
import { createHealthCheck } from '../http/healthCheck.js';
import { tickRunnerFor } from '../http/tickAdapter.js';
import { demoJobs } from './jobs.js';

export interface DemoDashboardOptions {
  connectionString: string;
  namespace: string;
  host: string;
  /** 0 picks a free port. */
  port: number;
}

export interface DemoDashboard {
  /** The dashboard's address: http://host:port/ui. */
  url: string;
  /** Signs in with the read and admin scopes (the views and the operator buttons). */
  token: string;
  close(): Promise<void>;
}

export function startDemoDashboard(o: DemoDashboardOptions): Promise<DemoDashboard> {
  const client = createClient({ connectionString: o.connectionString, namespace: o.namespace, jobs: demoJobs, poolMax: 4 });
  const token = `demo-${randomBytes(18).toString('base64url')}`;
  const app = createApp({
    client,
    apiTokens: [{ name: 'demo', token, scopes: ['read', 'admin'] }],
    sessionSecret: randomBytes(32).toString('hex'),
    health: createHealthCheck({ pool: client.pool }),
    // No signing secret: POST /tick refuses every request; the demo's workers do the work.
    tick: tickRunnerFor(client, undefined),
  });
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port: o.port, hostname: o.host }, (info) => {
      const host = o.host === '0.0.0.0' || o.host === '::' ? '127.0.0.1' : o.host.includes(':') ? `[${o.host}]` : o.host;
      resolve({
        url: `http://${host}:${info.port}/ui`,
        token,
        close: async () => {
          await new Promise<void>((done) => {
            (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
            server.close(() => done());
          });
          await client.close();
        },
      });
    });
    answerClientErrors(server);
    answerUnmetExpectations(server);
    server.once('error', (err) => {
      void client.close();
      reject(err);
    });
  });
}

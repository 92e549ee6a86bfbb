// Optional HTTP probes of a worker process (node:http, one small server),
// for a container orchestrator or a load balancer's health check:
//   GET /livez   200 while the process's worker loops are alive (starting,
//                running or draining); 503 once they have ended.
//   GET /readyz  200 when every worker is registered, none is draining and
//                the database answers a query; 503 with the reason otherwise.
// Both answer JSON ({ status, reason?, workers }). Any other path is 404,
// any other method 405. The server closes with the process.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as z from 'zod';

export const probeOptionsSchema = z
  .object({
    /** The port to listen on (0: any free port, see RunningProcess.probePort). */
    port: z.number().int().min(0).max(65_535),
    /** The address to bind. Default 0.0.0.0 (every interface: an orchestrator probes the pod's address). */
    host: z.string().min(1).default('0.0.0.0'),
    livenessPath: z.string().regex(/^\//, 'a path starts with /').default('/livez'),
    readinessPath: z.string().regex(/^\//, 'a path starts with /').default('/readyz'),
    /** How long the readiness probe waits for the database. Default 2 s. */
    databaseTimeoutMs: z.number().int().min(1).max(60_000).default(2_000),
  })
  .strict();

export type ProbeOptions = z.input<typeof probeOptionsSchema>;

export interface ProbeVerdict {
  ok: boolean;
  reason?: string;
}

export interface ProbeSubject {
  live(): ProbeVerdict;
  ready(databaseTimeoutMs: number): Promise<ProbeVerdict>;
  /** Each worker's id and state, shown in both answers. */
  workers(): unknown[];
}

export interface ProbeServer {
  readonly port: number;
  close(): Promise<void>;
}

export async function startProbes(options: z.output<typeof probeOptionsSchema>, subject: ProbeSubject): Promise<ProbeServer> {
  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    const probe = path === options.livenessPath ? 'live' : path === options.readinessPath ? 'ready' : undefined;
    if (!probe) return send(res, 404, { status: 'not_found' });
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, { status: 'method_not_allowed' });
    const verdict = probe === 'live' ? subject.live() : await subject.ready(options.databaseTimeoutMs);
    send(res, verdict.ok ? 200 : 503, { status: verdict.ok ? 'ok' : 'unavailable', ...(verdict.reason ? { reason: verdict.reason } : {}), workers: subject.workers() });
  };
  const server = createServer((req, res) => {
    answer(req, res).catch((err: unknown) => send(res, 503, { status: 'unavailable', reason: String(err) }));
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  res.end(text);
}

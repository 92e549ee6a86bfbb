// A loopback HTTP server standing in for a webhook receiver: it records every
// request (path, headers, body, whether its signature verifies) and answers
// with whatever `respond` decides (a status, or 'hang' to never answer).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifySignedRequest } from '../../src/signing/verify.js';

export interface ReceivedRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  json: { id: string; topic: string; key: string | null; payload: unknown; attempt: number; namespace: string; publishedAt: string };
  signatureOk: boolean;
  /** The status answered ('hang': none). */
  status: number | 'hang';
}

export interface WebhookReceiver {
  url: string;
  requests: ReceivedRequest[];
  /** Requests answered 2xx. */
  accepted(): ReceivedRequest[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(
  secret: string,
  respond: (req: Omit<ReceivedRequest, 'status'>, nth: number) => number | 'hang' = () => 200,
): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const hanging = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const v = await verifySignedRequest({
          secrets: [secret],
          method: req.method ?? 'POST',
          path: req.url ?? '/',
          body,
          timestampHeader: req.headers['x-workhorse-timestamp'] as string | undefined,
          signatureHeader: req.headers['x-workhorse-signature'] as string | undefined,
        });
        let json: ReceivedRequest['json'];
        try {
          json = JSON.parse(body);
        } catch {
          json = { id: '', topic: '', key: null, payload: null, attempt: 0, namespace: '', publishedAt: '' };
        }
        const seen = { path: req.url ?? '/', headers: req.headers, body, json, signatureOk: v.ok };
        const status = respond(seen, requests.length);
        requests.push({ ...seen, status });
        if (status === 'hang') {
          hanging.add(res);
          return;
        }
        res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'no');
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hooks/workhorse?src=test`,
    requests,
    accepted: () => requests.filter((r) => typeof r.status === 'number' && r.status < 300),
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

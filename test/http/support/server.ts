// A real HTTP server for an app under test (@hono/node-server on a free
// loopback port), and a raw socket client for requests fetch cannot make:
// a body that never arrives, a client that hangs up mid-body, a request
// target exactly as written.
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';
import { connect, type Socket } from 'node:net';
import type { HttpEnv } from '../../../src/http/env.js';

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export function startServer(app: Hono<HttpEnv>): Promise<RunningServer> {
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
      resolve({
        url: `http://127.0.0.1:${info.port}`,
        port: info.port,
        close: () =>
          new Promise<void>((done) => {
            (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
            server.close(() => done());
          }),
      });
    });
  });
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Parses the first response on a socket (headers and a Content-Length body). */
export function readResponse(socket: Socket): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let data = '';
    const onData = (chunk: Buffer) => {
      data += chunk.toString('utf8');
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [statusLine, ...lines] = data.slice(0, end).split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      const length = Number(headers['content-length'] ?? 0);
      const body = data.slice(end + 4);
      if (Buffer.byteLength(body) < length) return;
      socket.off('data', onData);
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body });
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
}

/** Opens a socket and writes the request head (and any start of a body) as given. */
export async function rawRequest(port: number, head: string, bodyStart = ''): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.write(head + bodyStart);
  return socket;
}

export function requestHead(method: string, target: string, headers: Record<string, string>): string {
  const lines = [`${method} ${target} HTTP/1.1`, 'host: 127.0.0.1', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return `${lines.join('\r\n')}\r\n\r\n`;
}

// The webhook sink does not follow redirects. fetch followed them: a 301,
// 302 or 303 turned the delivery into a bodiless GET that a 200 counted as
// delivered (the event never arrived anywhere), and a 307 resent it to a
// URL its signature was not made for. Each is now a failed delivery that
// names the status and where it pointed.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { webhookSink } from '../../src/outbox/webhookSink.js';

let server: Server;
let base: string;
const seen: { method: string; url: string }[] = [];

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '' });
    req.resume();
    req.on('end', () => {
      const m = /^\/hook\/(\d{3})$/.exec(req.url ?? '');
      if (m) res.writeHead(Number(m[1]), { location: '/moved' }).end();
      else res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const event = { id: '1', namespace: 'default', topic: 't', key: null, payload: { n: 1 }, publishedAt: new Date().toISOString(), attempt: 1 };

it.each([301, 302, 303, 307, 308])('fails a delivery answered %i, and sends nothing to where it points', async (status) => {
  seen.length = 0;
  const sink = webhookSink({ url: `${base}/hook/${status}`, secret: 'sink-secret-0123456789' });
  await expect(sink.deliver(event, new AbortController().signal)).rejects.toThrow(
    new RegExp(`webhook answered ${status} \\(to /moved\\): redirects are not followed`),
  );
  expect(seen).toEqual([{ method: 'POST', url: `/hook/${status}` }]);
});

// The webhook sink reads at most the start of a receiver's answer. It read
// the body whole (res.text()) and kept only its first 200 characters, so a
// receiver streaming a huge or endless body had the worker buffer all of it
// until the delivery timed out. Now a 2xx is delivered without reading its
// body, a failure quotes the body's first bytes, and the rest is cancelled:
// the receiver sees its connection closed while it is still sending.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { webhookSink } from '../../src/outbox/webhookSink.js';

let server: Server;
let base: string;
/** Per request: whether the answer was cut off by the sink (closed before it ended). */
const closedEarly: boolean[] = [];
const chunk = Buffer.alloc(16 * 1024, 'x');

/** Answers the status in the path, then streams an endless body until the client goes. */
function streamForever(res: ServerResponse, status: number): void {
  const nth = closedEarly.push(false) - 1;
  res.writeHead(status, { 'content-type': 'text/plain' });
  res.write(`start of the answer ${status} `);
  const timer = setInterval(() => {
    if (!res.writableNeedDrain) res.write(chunk);
  }, 5);
  res.on('close', () => {
    clearInterval(timer);
    closedEarly[nth] = !res.writableEnded;
  });
}

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => streamForever(res, Number(/^\/hook\/(\d{3})$/.exec(req.url ?? '')?.[1] ?? 200)));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  return new Promise<void>((r) => server.close(() => r()));
});

const event = { id: '1', namespace: 'default', topic: 't', key: null, payload: { n: 1 }, publishedAt: new Date().toISOString(), attempt: 1 };

/** deliver's outcome, or 'unsettled' if it has not settled within 5 s (the sink's timeout is 30 s). */
async function outcome(status: number): Promise<string> {
  const sink = webhookSink({ url: `${base}/hook/${status}`, secret: 'sink-secret-0123456789', timeoutMs: 30_000 });
  const ac = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      sink.deliver(event, ac.signal).then(
        () => 'delivered',
        (e: Error) => `failed: ${e.message}`,
      ),
      new Promise<string>((r) => (timer = setTimeout(() => r('unsettled'), 5_000))),
    ]);
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
}

async function receiverSawClose(): Promise<boolean> {
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline && !closedEarly.at(-1)) await new Promise((r) => setTimeout(r, 20));
  return closedEarly.at(-1) ?? false;
}

it('delivers on a 200 with an endless body without reading it, and closes the connection', async () => {
  expect(await outcome(200)).toBe('delivered');
  expect(await receiverSawClose()).toBe(true);
});

it('fails a 500 with an endless body promptly, quoting its start, and closes the connection', async () => {
  const result = await outcome(500);
  expect(result).toMatch(/^failed: webhook answered 500: start of the answer 500 x+$/);
  expect(result.length).toBeLessThan(300);
  expect(await receiverSawClose()).toBe(true);
});

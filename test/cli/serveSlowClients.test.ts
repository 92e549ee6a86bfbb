// `workhorse serve` and clients that do not send a request: a connection
// that sends nothing, or a header line every 2 s, is answered 408
// `request_timeout` about 10 s after it opened (Node's own 60 s header
// timeout, checked every 30 s, let it hold the connection for up to 90 s),
// and a CONNECT request is a 405 in the API's error shape (Node closed the
// connection without a word). Through the real command and raw sockets.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { startServeProcess, type ServeProcess } from '../helpers/serveProcess.js';

const TOKEN = 'slow-clients-token-0123456789abcdef';
let db: TestDatabase;
let serve: ServeProcess;
let port: number;

beforeAll(async () => {
  db = await createTestDatabase();
  serve = await startServeProcess({ DATABASE_URL: db.url, WORKHORSE_API_TOKEN: TOKEN });
  port = Number(new URL(serve.baseUrl).port);
}, 60_000);

afterAll(async () => {
  serve?.child.kill('SIGTERM');
  await db?.drop();
});

async function open(): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return socket;
}

/** Everything the server writes until it closes the connection, and how long after `since` it closed. */
function untilClosed(socket: Socket, since: number): Promise<{ text: string; afterMs: number }> {
  return new Promise((resolve) => {
    let text = '';
    socket.on('data', (d) => (text += String(d)));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve({ text, afterMs: Date.now() - since }));
  });
}

describe('workhorse serve and clients that do not send a request', () => {
  it('answers a connection that sends nothing, and one that trickles header lines, with 408 within seconds', async () => {
    const started = Date.now();
    const silent = await open();
    const trickling = await open();
    trickling.write('GET /jobs HTTP/1.1\r\nhost: 127.0.0.1\r\n');
    const timer = setInterval(() => trickling.writable && trickling.write(`x-slow-${Date.now()}: 1\r\n`), 2_000);
    try {
      const [a, b] = await Promise.all([untilClosed(silent, started), untilClosed(trickling, started)]);
      for (const r of [a, b]) {
        expect(r.text).toMatch(/^HTTP\/1\.1 408 /);
        expect(JSON.parse(r.text.slice(r.text.indexOf('\r\n\r\n') + 4))).toEqual({
          error: { code: 'request_timeout', message: 'the request did not arrive in time' },
        });
        // 10 s and a check a second: well before Node's own 60 s (and its 30 s checks).
        expect(r.afterMs).toBeLessThan(30_000);
      }
    } finally {
      clearInterval(timer);
      silent.destroy();
      trickling.destroy();
    }
  }, 45_000);

  it('answers CONNECT with a 405 in the error shape', async () => {
    const socket = await open();
    const closed = untilClosed(socket, Date.now());
    socket.write('CONNECT evil.example:443 HTTP/1.1\r\nhost: evil.example:443\r\n\r\n');
    const { text } = await closed;
    expect(text).toMatch(/^HTTP\/1\.1 405 /);
    expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toEqual({
      error: { code: 'method_not_allowed', message: 'CONNECT is not served here: this is not a proxy' },
    });
    // The server goes on serving.
    const res = await fetch(`${serve.baseUrl}/queues`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
  });
});

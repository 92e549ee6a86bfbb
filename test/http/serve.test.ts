// `workhorse serve` through a real socket: the CLI runs as a child process
// on a free port, requests are signed with the helper, and the edge example
// enqueues and kicks a tick over the network. SIGTERM stops it cleanly.
import type { ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueAndKick } from '../../examples/edge-enqueue.js';
import { signRequest } from '../../src/signing/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { SECRET } from './helpers.js';
import { startServeProcess } from '../helpers/serveProcess.js';
import { waitFor } from '../helpers/wait.js';

let db: TestDatabase;
let child: ChildProcess;
let baseUrl: string;
let serveOutput: () => string;

/** Writes `request` on a fresh socket as is and reads until the server closes it. */
function rawExchange(request: string): Promise<string> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    let got = '';
    const socket = connect(Number(port), hostname, () => socket.write(request));
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (got += d));
    socket.on('close', () => resolve(got));
    socket.on('error', reject);
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no answer within 10 s; got ${JSON.stringify(got)}`)));
  });
}

/** Every answer, those made before any route runs included, carries the API's headers. */
function expectApiHeaders(raw: string, what: string): void {
  const head = raw.slice(0, raw.indexOf('\r\n\r\n') + 2);
  expect(head, what).toMatch(/\r\ncache-control: no-store\r\n/i);
  expect(head, what).toMatch(/\r\nx-content-type-options: nosniff\r\n/i);
}

async function signedFetch(method: string, path: string, body = ''): Promise<Response> {
  const headers = await signRequest({ secret: SECRET, method, path, body });
  return fetch(baseUrl + path, { method, body: body || undefined, headers: { ...headers, 'content-type': 'application/json' } });
}

beforeAll(async () => {
  db = await createTestDatabase();
  // The edge example signs its enqueue too: signatures get the enqueue and read scopes.
  const serve = await startServeProcess({ DATABASE_URL: db.url, WORKHORSE_SIGNING_SECRET: SECRET, WORKHORSE_SIGNED_SCOPES: 'enqueue,read', WORKHORSE_API_TOKEN: '' });
  child = serve.child;
  baseUrl = serve.baseUrl;
  serveOutput = serve.output;
}, 60_000);

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await db?.drop();
});

describe('workhorse serve', () => {
  it('listens on the port it was given', () => {
    expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:[0-9]+$/);
  });

  it('answers a signed POST /tick with a tick summary', async () => {
    const res = await signedFetch('POST', '/tick');
    expect(res.status).toBe(200);
    const summary = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(summary).sort()).toEqual(['claimed', 'failed', 'fannedOut', 'lost', 'msLeft', 'recovered', 'retried', 'skippedTimeout', 'slotsFired', 'succeeded', 'suspended']);
    expect(summary).toMatchObject({ claimed: 0, failed: 0 });
  });

  it('answers an unsigned POST /tick with a JSON 401', async () => {
    const res = await fetch(`${baseUrl}/tick`, { method: 'POST' });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: { code: 'unauthorized' } });
  });

  it('runs the edge example: enqueue over HTTP, kick a tick, job succeeded', async () => {
    const r = await enqueueAndKick(
      { WORKHORSE_URL: baseUrl, WORKHORSE_SIGNING_SECRET: SECRET },
      { type: 'email.send', payload: { to: 'edge@example.com', subject: 'from the edge' }, dedupeKey: 'edge:1' },
    );
    expect(r).toMatchObject({ created: true, tick: { claimed: 1, succeeded: 1 } });
    const job = (await (await signedFetch('GET', `/jobs/${r.id}`)).json()) as Record<string, unknown>;
    expect(job).toMatchObject({ status: 'succeeded', result: { delivered: 'edge@example.com' } });
  });

  it('refuses a bearer token when none is configured, and answers /healthz without credentials', async () => {
    const res = await fetch(`${baseUrl}/jobs`, { headers: { authorization: 'Bearer anything-at-all-123456' } });
    expect(res.status).toBe(401);
    const health = await fetch(`${baseUrl}/healthz`);
    expect(health.status).toBe(200);
  });

  it("answers what Node's HTTP parser refuses in the API's error shape, not a bare status", async () => {
    const badLength = await rawExchange(`GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n`);
    expect(badLength).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(badLength).toMatch(/\r\ncontent-type: application\/json\r\n/i);
    expectApiHeaders(badLength, 'a bad Content-Length');
    expect(JSON.parse(badLength.slice(badLength.indexOf('\r\n\r\n') + 4))).toMatchObject({ error: { code: 'bad_request' } });
    const hugeHeaders = await rawExchange(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(hugeHeaders).toMatch(/^HTTP\/1\.1 431 /);
    expectApiHeaders(hugeHeaders, 'headers too large');
    const tunnel = await rawExchange('CONNECT 127.0.0.1:5432 HTTP/1.1\r\nHost: 127.0.0.1:5432\r\n\r\n');
    expect(tunnel).toMatch(/^HTTP\/1\.1 405 Method Not Allowed\r\n/);
    expectApiHeaders(tunnel, 'CONNECT');
    expect(JSON.parse(hugeHeaders.slice(hugeHeaders.indexOf('\r\n\r\n') + 4))).toMatchObject({ error: { code: 'headers_too_large' } });
    // The server is still serving.
    expect((await fetch(`${baseUrl}/healthz`)).status).toBe(200);
  });

  it('answers what the adapter cannot turn into a request (a bad Host, a backslash in the path, OPTIONS *) or an HTTP/1.1 request without a Host with a JSON 400, not an empty one', async () => {
    for (const request of [
      'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n',
      'GET /jobs HTTP/1.1\r\nHost: a b\r\n\r\n',
      'GET /jobs HTTP/1.1\r\nHost: x:99999\r\n\r\n',
      'GET /jobs\\1 HTTP/1.1\r\nHost: x\r\n\r\n',
      'OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n',
    ]) {
      const got = await rawExchange(request);
      expect(got, request).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(got, request).toMatch(/\r\ncontent-type: application\/json\r\n/i);
      expect(got, request).toContain('"code":"bad_request"');
      expectApiHeaders(got, request);
    }
    expect((await fetch(`${baseUrl}/healthz`)).status).toBe(200);
    // HTTP/1.0 needs no Host.
    expect(await rawExchange('GET /healthz HTTP/1.0\r\n\r\n')).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
  });

  it("answers an Expect other than 100-continue with a JSON 417, and still honours Expect: 100-continue", async () => {
    const refused = await rawExchange(`POST /jobs HTTP/1.1\r\nHost: x\r\nExpect: foo\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`);
    expect(refused).toMatch(/^HTTP\/1\.1 417 Expectation Failed\r\n/);
    expect(refused).toMatch(/\r\ncontent-type: application\/json\r\n/i);
    expectApiHeaders(refused, 'Expect: foo');
    expect(JSON.parse(refused.slice(refused.indexOf('\r\n\r\n') + 4))).toEqual({
      error: { code: 'expectation_failed', message: 'the server cannot meet "Expect: foo": it supports only "Expect: 100-continue"' },
    });
    const body = JSON.stringify({ type: 'email.send', payload: { to: 'expect@example.com', subject: 'continue' } });
    const sig = await signRequest({ secret: SECRET, method: 'POST', path: '/jobs', body });
    const headers = Object.entries(sig).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    const accepted = await rawExchange(
      `POST /jobs HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n${headers}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(accepted).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 201 Created\r\n/);
    expect(JSON.parse(accepted.slice(accepted.lastIndexOf('\r\n\r\n') + 4))).toMatchObject({ created: true });
  });

  it('exits 0 on SIGTERM, saying so', async () => {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(serveOutput()).toContain('workhorse serve: SIGTERM: no new connections; the requests in flight finish, then it exits (a second signal exits at once)');
  });

  it('exits 130 at once on a second signal while a request is still in flight, saying so', async () => {
    const second = await startServeProcess({ DATABASE_URL: db.url, WORKHORSE_SIGNING_SECRET: SECRET, WORKHORSE_API_TOKEN: '' });
    const { hostname, port } = new URL(second.baseUrl);
    // A request whose body never finishes arriving: the server waits for it.
    const socket = connect(Number(port), hostname, () => socket.write('POST /jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a'));
    socket.on('error', () => undefined);
    await new Promise((r) => socket.once('connect', r));
    await new Promise((r) => setTimeout(r, 200));
    const exited = new Promise<number | null>((resolve) => second.child.once('exit', (code) => resolve(code)));
    second.child.kill('SIGINT');
    await waitFor(() => second.output(), (o) => o.includes('SIGINT: no new connections'), { what: 'the first signal to be told' });
    second.child.kill('SIGTERM');
    expect(await exited).toBe(130);
    expect(second.output()).toContain('workhorse serve: SIGTERM again: exiting 130');
    socket.destroy();
  });
});

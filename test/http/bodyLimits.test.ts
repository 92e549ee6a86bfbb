// Request bodies over a real socket: a bearer token is checked from the
// headers before any body byte is read, so a client without valid
// credentials cannot make the server wait for (or buffer) a body; at most
// `maxBodyReads` bodies are read at once (more get 503 with Retry-After); a
// body that does not arrive in time is 408; and a client that hangs up
// mid-body is not logged as an internal failure.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';
import { buildHttp, countJobs, TOKEN, type HttpHarness } from './helpers.js';
import { rawRequest, readResponse, requestHead, startServer, type RunningServer } from './support/server.js';

const READ_ONLY = 'read-only-token-0123456789';
const BODY_TIMEOUT_MS = 1500;

let db: TestDatabase;
let h: HttpHarness;
let server: RunningServer;
const logged: unknown[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  h = buildHttp(db, {
    maxBodyReads: 2,
    bodyTimeoutMs: BODY_TIMEOUT_MS,
    apiTokens: [{ name: 'reader', token: READ_ONLY, scopes: ['read'] }],
    log: (_m, err) => logged.push(err),
  });
  server = await startServer(h.app);
});

afterAll(async () => {
  await server.close();
  await h.client.close();
  await db.drop();
});

const email = JSON.stringify({ type: 'email.send', payload: { to: 'ada@example.com', subject: 'hi' } });

function postHead(token: string, length: number): string {
  return requestHead('POST', '/jobs', { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': String(length) });
}

describe('authentication before the body', () => {
  it('answers a wrong or under-scoped token at once, though the declared body never arrives', async () => {
    for (const [token, status] of [
      ['wrong-token-0123456789abcdef', 401],
      [READ_ONLY, 403],
    ] as const) {
      const socket = await rawRequest(server.port, postHead(token, 500_000));
      const started = Date.now();
      const res = await readResponse(socket);
      socket.destroy();
      expect(res.status).toBe(status);
      // Well inside the body timeout: the server did not wait for the body.
      expect(Date.now() - started).toBeLessThan(BODY_TIMEOUT_MS);
    }
  });

  it('waits for the body of a valid token, and refuses one that does not arrive in time with 408', async () => {
    const socket = await rawRequest(server.port, postHead(TOKEN, 1000), '{"type":');
    const started = Date.now();
    const res = await readResponse(socket);
    socket.destroy();
    expect(res.status).toBe(408);
    expect(JSON.parse(res.body)).toMatchObject({ error: { code: 'body_timeout' } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 100);
    expect(await countJobs(db)).toBe(0);
  });
});

describe('concurrent body reads', () => {
  it('reads at most maxBodyReads bodies at once; one more gets 503 with Retry-After, and the slots free again', async () => {
    const slow = await Promise.all([1, 2].map(() => rawRequest(server.port, postHead(TOKEN, Buffer.byteLength(email)), email.slice(0, 10))));
    // Give the server time to start reading both bodies.
    await new Promise((r) => setTimeout(r, 200));
    const busy = await fetch(`${server.url}/jobs`, { method: 'POST', body: email, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' } });
    expect(busy.status).toBe(503);
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(await busy.json()).toMatchObject({ error: { code: 'busy' } });
    // A request without a body does not need a slot, nor does a POST whose body is declared empty (fetch's, with no body):
    // an operator's pause is answered while slow uploads hold every slot.
    expect((await fetch(`${server.url}/jobs`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    await h.client.admin.setQueueLimits('bodyless', { concurrencyLimit: 1 });
    const pause = await fetch(`${server.url}/queues/bodyless/pause`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-length': '0' } });
    expect([pause.status, await pause.json()]).toEqual([200, { name: 'bodyless', paused: true }]);

    const answers = slow.map((s) => readResponse(s));
    for (const s of slow) s.write(email.slice(10));
    const done = await Promise.all(answers);
    for (const s of slow) s.destroy();
    expect(done.map((r) => r.status)).toEqual([201, 201]);
    const after = await fetch(`${server.url}/jobs`, { method: 'POST', body: email, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' } });
    expect(after.status).toBe(201);
    await db.pool.query('truncate workhorse.jobs cascade');
  });
});

describe('signed requests before their MAC is checked', () => {
  const forgedHead = (timestamp: number, length: number) =>
    requestHead('POST', '/tick', {
      'x-workhorse-timestamp': String(timestamp),
      'x-workhorse-signature': `v1=${'ab'.repeat(32)}`,
      'content-type': 'application/json',
      'content-length': String(length),
    });

  it('refuses a stale or malformed signature from the headers, without waiting for the body', async () => {
    for (const head of [
      forgedHead(Math.floor(Date.now() / 1000) - 3600, 500_000),
      requestHead('POST', '/tick', { 'x-workhorse-timestamp': 'soon', 'x-workhorse-signature': 'v1=ab', 'content-length': '500000' }),
    ]) {
      const socket = await rawRequest(server.port, head);
      const started = Date.now();
      const res = await readResponse(socket);
      socket.destroy();
      expect(res.status).toBe(401);
      expect(Date.now() - started).toBeLessThan(BODY_TIMEOUT_MS);
    }
  });

  it("read their bodies in slots of their own: forged signatures with bodies that never arrive cannot make bearer requests busy", async () => {
    const forged = await Promise.all([1, 2, 3].map(() => rawRequest(server.port, forgedHead(Math.floor(Date.now() / 1000), 1000), '{"budgetMs":')));
    await new Promise((r) => setTimeout(r, 200));
    try {
      // The signed slot is taken: another signed request is busy…
      const signed = await rawRequest(server.port, forgedHead(Math.floor(Date.now() / 1000), 2), '{}');
      expect((await readResponse(signed)).status).toBe(503);
      signed.destroy();
      // …while both bearer slots are free.
      const posts = await Promise.all(
        [1, 2].map(() => fetch(`${server.url}/jobs`, { method: 'POST', body: email, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' } })),
      );
      expect(posts.map((r) => r.status)).toEqual([201, 201]);
    } finally {
      for (const s of forged) s.destroy();
      await db.pool.query('truncate workhorse.jobs cascade');
    }
  });
});

describe('a client that goes away', () => {
  it('is not logged as an internal failure, writes nothing and frees its body slot', async () => {
    for (let i = 0; i < 3; i++) {
      const socket = await rawRequest(server.port, postHead(TOKEN, 10_000), '{"type":"email.send","payload":');
      await new Promise((r) => setTimeout(r, 100));
      socket.destroy();
    }
    // Both slots come back: two bodies at once are read again.
    await waitFor(
      async () => {
        const tries = await Promise.all(
          [1, 2].map(() => fetch(`${server.url}/jobs`, { method: 'POST', body: '{', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' } })),
        );
        return tries.map((r) => r.status);
      },
      (statuses) => statuses.every((s) => s === 400),
      { timeoutMs: 5000, what: 'the aborted reads to release their slots' },
    );
    expect(logged).toEqual([]);
    expect(await countJobs(db)).toBe(0);
  });
});

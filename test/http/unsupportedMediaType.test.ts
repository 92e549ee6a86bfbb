// A route that reads a JSON body refuses a body declared as something else
// (form data, text) with 415 `unsupported_media_type`, over a real socket,
// after authentication and before anything runs. JSON is application/json or
// any application/*+json, in any case, with parameters; a charset other than
// UTF-8 and a compressed body (Content-Encoding) are refused the same way; a
// request without a Content-Type is still accepted. The dashboard's own forms are not JSON and
// do not go through this rule.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isJsonMediaType } from '../../src/http/mediaType.js';
import { signRequest } from '../../src/signing/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { buildHttp, countJobs, SECRET, TOKEN, type ErrorJson, type HttpHarness } from './helpers.js';
import { startServer, type RunningServer } from './support/server.js';

let db: TestDatabase;
let h: HttpHarness;
let server: RunningServer;

beforeAll(async () => {
  db = await createTestDatabase();
  h = buildHttp(db, { sessionSecret: 'media-test-session-secret-0123456789' });
  server = await startServer(h.app);
});

afterAll(async () => {
  await server?.close();
  await h?.client.close();
  await db?.drop();
});

const JOB = JSON.stringify({ type: 'email.send', payload: { to: 'ada@example.com', subject: 'hi' } });

/** A request whose Content-Type is exactly `contentType`, or absent (a byte body makes fetch add none). */
function post(path: string, body: string, contentType: string | undefined, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    body: new TextEncoder().encode(body),
    headers: { ...(contentType === undefined ? {} : { 'content-type': contentType }), ...headers },
  });
}

async function signedTick(body: string, contentType: string | undefined): Promise<Response> {
  return post('/tick', body, contentType, await signRequest({ secret: SECRET, method: 'POST', path: '/tick', body }));
}

const BEARER = { authorization: `Bearer ${TOKEN}` };

describe('a JSON route given a body that is not declared JSON', () => {
  for (const contentType of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', 'text/json', 'application/xml']) {
    it(`answers POST /jobs with Content-Type ${contentType} with 415 and writes nothing`, async () => {
      const res = await post('/jobs', JOB, contentType, BEARER);
      expect(res.status).toBe(415);
      const e = ((await res.json()) as ErrorJson).error;
      expect(e.code).toBe('unsupported_media_type');
      expect(e.message).toContain('send "Content-Type: application/json"');
      expect(e.message).toContain(JSON.stringify(contentType));
      expect(await countJobs(db)).toBe(0);
    });
  }

  for (const contentType of ['application/json; charset=iso-8859-1', 'application/json;charset="latin1"', 'application/json; charset=utf-16', 'application/json; charset=utf-8; charset=iso-8859-1']) {
    it(`answers POST /jobs with Content-Type ${contentType} (not UTF-8) with 415 and writes nothing`, async () => {
      const res = await post('/jobs', JOB, contentType, BEARER);
      expect(res.status).toBe(415);
      const e = ((await res.json()) as ErrorJson).error;
      expect(e.code).toBe('unsupported_media_type');
      expect(e.message).toContain('JSON in UTF-8');
      expect(await countJobs(db)).toBe(0);
    });
  }

  for (const encoding of ['gzip', 'br', 'GZIP, deflate']) {
    it(`answers POST /jobs with Content-Encoding ${encoding} with 415 naming the coding, and writes nothing`, async () => {
      const res = await post('/jobs', JOB, 'application/json', { ...BEARER, 'content-encoding': encoding });
      expect(res.status).toBe(415);
      const e = ((await res.json()) as ErrorJson).error;
      expect(e.code).toBe('unsupported_media_type');
      expect(e.message).toContain('must not be compressed');
      expect(e.message).toContain(JSON.stringify(encoding.toLowerCase()));
      expect(await countJobs(db)).toBe(0);
    });
  }

  it('refuses the other JSON routes the same way', async () => {
    const job = await h.client.enqueue('email.send', { to: 'ada@example.com', subject: 'hi' });
    for (const [path, body] of [
      [`/jobs/${job.id}/cancel`, '{}'],
      ['/outbox/retry', '{"ids":["1"]}'],
      [`/jobs/${job.id}/signals/paid`, '{}'],
    ] as const) {
      const res = await post(path, body, 'text/plain', BEARER);
      expect(res.status, path).toBe(415);
      expect(((await res.json()) as ErrorJson).error.code, path).toBe('unsupported_media_type');
    }
    expect((await h.client.getJob(job.id))!.status).toBe('ready');
  });

  it('authenticates first: no credentials is still 401', async () => {
    const res = await post('/jobs', JOB, 'text/plain');
    expect(res.status).toBe(401);
    const tick = await post('/tick', '', 'text/plain');
    expect(tick.status).toBe(401);
  });

  it('takes a body-less request whatever it declares: there is nothing to misread', async () => {
    const job = await h.client.enqueue('email.send', { to: 'ada@example.com', subject: 'empty' });
    const res = await post(`/jobs/${job.id}/cancel`, '', 'application/x-www-form-urlencoded', BEARER);
    expect(res.status).toBe(200);
    expect((await h.client.getJob(job.id))!.status).toBe('cancelled');
  });

  it('refuses a correctly signed tick declared as form data, and runs no tick', async () => {
    const res = await signedTick('{"budgetMs":500}', 'application/x-www-form-urlencoded');
    expect(res.status).toBe(415);
    expect(((await res.json()) as ErrorJson).error.code).toBe('unsupported_media_type');
    expect(h.tick.calls).toEqual([]);
  });
});

describe('a JSON route given a JSON body, or one without a Content-Type', () => {
  for (const contentType of ['application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON;Charset=UTF-8', 'application/json; charset="utf8"', 'application/vnd.api+json', 'application/merge-patch+json', undefined]) {
    it(`accepts POST /jobs with ${contentType === undefined ? 'no Content-Type' : `Content-Type ${contentType}`}`, async () => {
      const res = await post('/jobs', JSON.stringify({ type: 'email.send', payload: { to: 'ada@example.com', subject: String(contentType) } }), contentType, BEARER);
      expect(res.status).toBe(201);
    });
  }

  it('accepts Content-Encoding identity', async () => {
    const res = await post('/jobs', JSON.stringify({ type: 'email.send', payload: { to: 'ada@example.com', subject: 'identity' } }), 'application/json', { ...BEARER, 'content-encoding': 'identity' });
    expect(res.status).toBe(201);
  });

  it('accepts a signed tick with a JSON Content-Type or none, with or without a body', async () => {
    h.tick.calls.length = 0;
    for (const [body, contentType] of [['', undefined], ['', 'application/json'], ['{"budgetMs":500}', undefined], ['{"budgetMs":500}', 'application/json']] as const) {
      const res = await signedTick(body, contentType);
      expect(res.status, `${JSON.stringify(body)} ${contentType}`).toBe(200);
    }
    expect(h.tick.calls).toHaveLength(4);
  });
});

describe('the dashboard forms', () => {
  it('still take form data', async () => {
    const res = await fetch(`${server.url}/ui/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
      body: new URLSearchParams({ token: TOKEN, next: '/ui' }),
    });
    expect(res.status).toBe(303);
  });
});

describe('isJsonMediaType', () => {
  it('names JSON and its +json types, in any case, with parameters', () => {
    for (const t of ['application/json', ' Application/JSON ; charset=utf-8', 'application/problem+json', 'application/vnd.workhorse.v1+json;q=1']) expect(isJsonMediaType(t), t).toBe(true);
    for (const t of ['text/plain', 'application/jsonp', 'application/+json', 'application/a b+json', 'json', 'application/json+xml', '*/*']) expect(isJsonMediaType(t), t).toBe(false);
  });
});

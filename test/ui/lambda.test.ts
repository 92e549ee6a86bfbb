// The dashboard behind a Lambda Function URL, invoked as Lambda invokes
// the HTTP function (payload format 2.0): a scripted bearer read, answered
// compressed and base64-encoded; sign-in answering the session cookie in
// the response's `cookies`; a signed-in page and an action with the cookie
// arriving in the event's `cookies`, from the function's own https origin.
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHttpHandler, type HttpHandler } from '../../src/http/lambda.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { ADMIN_TOKEN, READ_TOKEN, SESSION_SECRET } from './support/dashboard.js';

const DOMAIN = 'abcdefghij.lambda-url.eu-west-1.on.aws';
let db: TestDatabase;
let handler: HttpHandler;

interface Result {
  statusCode: number;
  headers: Record<string, string>;
  cookies?: string[];
  body: string;
  isBase64Encoded: boolean;
}

function event(method: string, rawPath: string, o: { headers?: Record<string, string>; cookies?: string[]; body?: string } = {}) {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString: '',
    cookies: o.cookies,
    headers: { host: DOMAIN, 'user-agent': 'Mozilla/5.0', ...o.headers },
    requestContext: {
      accountId: 'anonymous',
      apiId: 'abcdefghij',
      domainName: DOMAIN,
      domainPrefix: 'abcdefghij',
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '203.0.113.9', userAgent: 'Mozilla/5.0' },
      requestId: `req-${Math.random().toString(36).slice(2)}`,
      routeKey: '$default',
      stage: '$default',
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
    },
    body: o.body ?? null,
    isBase64Encoded: false,
  };
}

const context = { getRemainingTimeInMillis: () => 30_000, functionName: 'workhorse-http', awsRequestId: 'r' };
const invoke = async (e: ReturnType<typeof event>) => (await handler(e as never, context as never)) as unknown as Result;

beforeAll(async () => {
  db = await createTestDatabase();
  handler = buildHttpHandler(undefined, {
    env: {
      DATABASE_URL: db.url,
      WORKHORSE_API_TOKENS: JSON.stringify([
        { name: 'ops', token: ADMIN_TOKEN, scopes: ['read', 'admin'] },
        { name: 'viewer', token: READ_TOKEN, scopes: ['read'] },
      ]),
      WORKHORSE_SESSION_SECRET: SESSION_SECRET,
    },
  });
  await db.pool.query(`insert into workhorse.jobs (namespace, queue, type) values ('default', 'reports', 'report.build')`);
});

afterAll(async () => {
  await db?.drop();
});

describe('the dashboard behind a Function URL', () => {
  it('answers a scripted bearer read compressed and base64-encoded, with the CSP', async () => {
    const r = await invoke(event('GET', '/ui', { headers: { authorization: `Bearer ${READ_TOKEN}`, 'accept-encoding': 'gzip' } }));
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-encoding']).toBe('gzip');
    expect(r.isBase64Encoded).toBe(true);
    expect(r.headers['content-security-policy']).toMatch(/^default-src 'none'; script-src 'self'/);
    expect(gunzipSync(Buffer.from(r.body, 'base64')).toString('utf8')).toMatch(/<h1>Namespace<\/h1>[\s\S]*report\.build/);
  });

  it('signs in, shows the signed-in page and pauses a queue with the session cookie the event carries', async () => {
    const origin = `https://${DOMAIN}`;
    const form = { 'content-type': 'application/x-www-form-urlencoded', origin, 'sec-fetch-site': 'same-origin' };
    const signIn = await invoke(event('POST', '/ui/sign-in', { headers: form, body: new URLSearchParams({ token: ADMIN_TOKEN, next: '/ui/queues' }).toString() }));
    expect(signIn.statusCode).toBe(303);
    expect(signIn.headers.location).toBe('/ui/queues');
    const setCookie = signIn.cookies ?? [signIn.headers['set-cookie']!];
    expect(setCookie).toEqual([expect.stringMatching(/^__Host-workhorse-session=[^;]+; Max-Age=28800; Path=\/; HttpOnly; Secure; SameSite=Strict$/)]);
    const cookie = setCookie[0]!.split(';')[0]!;

    const page = await invoke(event('GET', '/ui/queues', { cookies: [cookie] }));
    expect(page.statusCode).toBe(200);
    const html = page.isBase64Encoded ? Buffer.from(page.body, 'base64').toString('utf8') : page.body;
    expect(html).toContain('ops <span class="small">(read, admin)</span>');
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;

    const pause = await invoke(event('POST', '/ui/queues/reports/pause', { cookies: [cookie], headers: form, body: new URLSearchParams({ csrf }).toString() }));
    expect(pause.statusCode).toBe(303);
    const q = await db.pool.query<{ paused: boolean }>(`select paused from workhorse.queues where name = 'reports'`);
    expect(q.rows[0]!.paused).toBe(true);
  });
});

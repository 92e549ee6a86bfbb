// handlers/http.ts invoked as Lambda invokes it: Function URL events
// (payload format 2.0) and a context whose time left counts down. The module
// builds nothing at import; the first invocation reads the environment.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { signRequest } from '../../src/signing/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { SECRET, TOKEN } from './helpers.js';

type Handler = typeof import('../../handlers/http.js').handler;

let db: TestDatabase;
let handler: Handler;

function functionUrlEvent(method: string, rawPath: string, body = '', headers: Record<string, string> = {}, rawQueryString = '') {
  const domainName = 'abcdefghij.lambda-url.eu-west-1.on.aws';
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString,
    headers: { host: domainName, 'content-type': 'application/json', 'user-agent': 'edge/1.0', ...headers },
    requestContext: {
      accountId: 'anonymous',
      apiId: 'abcdefghij',
      domainName,
      domainPrefix: 'abcdefghij',
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '203.0.113.9', userAgent: 'edge/1.0' },
      requestId: `req-${Math.random().toString(36).slice(2)}`,
      routeKey: '$default',
      stage: '$default',
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
    },
    body: body === '' ? null : body,
    isBase64Encoded: false,
  };
}

/** A Lambda context whose time left counts down from `ms`. */
function contextWithBudget(ms: number) {
  const end = Date.now() + ms;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'workhorse-http',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:workhorse-http',
    memoryLimitInMB: '512',
    awsRequestId: 'aws-req-1',
    logGroupName: '/aws/lambda/workhorse-http',
    logStreamName: 'stream',
    getRemainingTimeInMillis: () => Math.max(0, end - Date.now()),
  };
}

beforeAll(async () => {
  db = await createTestDatabase();
  delete process.env.DATABASE_URL;
  ({ handler } = await import('../../handlers/http.js'));
});

afterAll(async () => {
  await db.drop();
});

describe('handlers/http.ts', () => {
  it('imports without reading the environment or opening a connection', async () => {
    expect(typeof handler).toBe('function');
    const r = await db.pool.query(`select count(*)::int as n from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()`, [db.name]);
    // Only the test's own admin pool is connected.
    expect(r.rows[0].n).toBeLessThanOrEqual(1);
  });

  it('fails an invocation with a clear error while DATABASE_URL is missing, and recovers once it is set', async () => {
    await expect(handler(functionUrlEvent('GET', '/healthz') as never, contextWithBudget(5000) as never)).rejects.toThrow(/DATABASE_URL is not set/);
    Object.assign(process.env, {
      DATABASE_URL: db.url,
      WORKHORSE_SIGNING_SECRET: SECRET,
      WORKHORSE_API_TOKEN: TOKEN,
      // Signed requests may also read (the query-string test below lists jobs signed).
      WORKHORSE_SIGNED_SCOPES: 'read',
      WORKHORSE_APP: fileURLToPath(new URL('./fixtures/app.ts', import.meta.url)),
    });
    const res = await handler(functionUrlEvent('GET', '/healthz') as never, contextWithBudget(5000) as never);
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ ok: true });
  });

  it('enqueues with a bearer token, ticks on a signed Function URL event, and shows the job succeeded', async () => {
    const body = JSON.stringify({ type: 'email.send', payload: { to: 'lambda@example.com', subject: 'hi' } });
    const enq = await handler(functionUrlEvent('POST', '/jobs', body, { authorization: `Bearer ${TOKEN}` }) as never, contextWithBudget(5000) as never);
    expect(enq.statusCode, enq.body).toBe(201);
    const { id } = JSON.parse(enq.body) as { id: string };

    const sig = await signRequest({ secret: SECRET, method: 'POST', path: '/tick', body: '' });
    const tick = await handler(functionUrlEvent('POST', '/tick', '', sig) as never, contextWithBudget(6000) as never);
    expect(tick.statusCode).toBe(200);
    expect(tick.headers['content-type']).toMatch(/application\/json/);
    const summary = JSON.parse(tick.body) as Record<string, number>;
    expect(summary).toMatchObject({ claimed: 1, succeeded: 1, failed: 0 });
    // The tick's budget was the invocation's time left less the response margin.
    expect(summary.msLeft).toBeLessThanOrEqual(5000);

    const get = await handler(functionUrlEvent('GET', `/jobs/${id}`, '', { authorization: `Bearer ${TOKEN}` }) as never, contextWithBudget(5000) as never);
    expect(JSON.parse(get.body)).toMatchObject({ id, status: 'succeeded', result: { delivered: 'lambda@example.com' } });
  });

  it('verifies a signature over a base64-encoded body and over the query string', async () => {
    const body = '{"budgetMs":1000}';
    const sig = await signRequest({ secret: SECRET, method: 'POST', path: '/tick', body });
    const event = { ...functionUrlEvent('POST', '/tick', Buffer.from(body).toString('base64'), sig), isBase64Encoded: true };
    expect((await handler(event as never, contextWithBudget(5000) as never)).statusCode).toBe(200);

    const listSig = await signRequest({ secret: SECRET, method: 'GET', path: '/jobs?status=succeeded&limit=10' });
    const list = await handler(functionUrlEvent('GET', '/jobs', '', listSig, 'status=succeeded&limit=10') as never, contextWithBudget(5000) as never);
    expect(list.statusCode).toBe(200);
    expect((JSON.parse(list.body) as { jobs: unknown[] }).jobs).toHaveLength(1);
  });

  it('answers an unsigned tick with a JSON 401 and runs nothing', async () => {
    await db.pool.query(`insert into workhorse.jobs (namespace, queue, type, payload) values ('default', 'default', 'email.send', '{"to":"x@example.com","subject":"s"}')`);
    const res = await handler(functionUrlEvent('POST', '/tick') as never, contextWithBudget(5000) as never);
    expect(res.statusCode).toBe(401);
    expect(JSON.parse(res.body)).toMatchObject({ error: { code: 'unauthorized' } });
    const ready = await db.pool.query(`select count(*)::int as n from workhorse.jobs where status = 'ready'`);
    expect(ready.rows[0].n).toBe(1);
  });

  it('answers an event it cannot read (not an object, a body marked base64 that is not) with a JSON 400, never a 500', async () => {
    const sig = await signRequest({ secret: SECRET, method: 'POST', path: '/tick', body: '' });
    for (const event of [null, 'GET /healthz', [1], { ...functionUrlEvent('POST', '/tick', '%%% not base64 %%%', sig), isBase64Encoded: true }]) {
      const res = await handler(event as never, contextWithBudget(5000) as never);
      expect(res.statusCode, JSON.stringify(event)).toBe(400);
      expect(res.headers).toMatchObject({ 'content-type': 'application/json', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
      expect(JSON.parse(res.body)).toMatchObject({ error: { code: 'bad_request' } });
    }
  });

  it('answers an event the adapter cannot turn into a request with the same JSON 400, and runs nothing', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const enqueue = functionUrlEvent('POST', '/jobs', JSON.stringify({ type: 'email.send', payload: { to: 'a@example.com', subject: 'x' } }), auth);
    const before = await db.pool.query('select count(*)::int as n from workhorse.jobs');
    const events: [string, unknown][] = [
      // Hono decodes any truthy isBase64Encoded: its decoder threw, a plain-text 500.
      ['isBase64Encoded as the string "true"', { ...enqueue, isBase64Encoded: 'true' }],
      ['a base64 body that is not a string', { ...enqueue, body: 12, isBase64Encoded: true }],
      // The adapter's TypeErrors: a plain-text 400 "Invalid request".
      ['no requestContext (a GET with a body)', { ...enqueue, requestContext: undefined }],
      ['a header name Headers refuses', { ...enqueue, headers: { ...enqueue.headers, 'bad name': 'x' } }],
      ['REST API multiValueHeaders that are not arrays', { httpMethod: 'POST', path: '/jobs', headers: auth, multiValueHeaders: { authorization: 'x' }, body: enqueue.body, isBase64Encoded: false }],
      ['REST API multiValueQueryStringParameters that are not arrays', { httpMethod: 'GET', path: '/jobs', headers: auth, multiValueQueryStringParameters: { limit: '5' }, body: null, isBase64Encoded: false }],
      // No method: the adapter ran these as GETs (the job list answered 200).
      ['an empty object', {}],
      ['an empty requestContext', { requestContext: {} }],
      ['a function URL event whose requestContext.http has no method', { ...enqueue, requestContext: { ...enqueue.requestContext, http: {} } }],
      ['a REST API event with no httpMethod', { path: '/jobs', headers: auth, requestContext: {}, body: null, isBase64Encoded: false }],
      ['a header value that is not a string', { ...enqueue, headers: { ...enqueue.headers, 'x-n': 5 } }],
    ];
    for (const [what, event] of events) {
      const res = (await handler(event as never, contextWithBudget(5000) as never)) as { statusCode: number; headers?: Record<string, string>; multiValueHeaders?: Record<string, string[]>; body: string };
      expect(res.statusCode, what).toBe(400);
      expect(res.headers?.['content-type'] ?? res.multiValueHeaders?.['content-type']?.[0], what).toBe('application/json');
      expect(res.headers ?? res.multiValueHeaders, what).toMatchObject({ 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
      expect(JSON.parse(res.body), what).toMatchObject({ error: { code: 'bad_request' } });
    }
    const after = await db.pool.query('select count(*)::int as n from workhorse.jobs');
    expect(after.rows[0].n).toBe(before.rows[0].n);
  });

  it('refuses a path that is missing, not a string, relative or holds a backslash, and query parameters the adapter would throw on, saying which, with nothing logged', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const pause = functionUrlEvent('POST', '/queues/email/pause', '', auth);
    const { rawPath: _dropped, ...noRawPath } = pause;
    const rest = { httpMethod: 'GET', path: '/jobs/1', headers: auth, requestContext: {}, body: null, isBase64Encoded: false };
    const cases: [string, unknown, RegExp][] = [
      // Served as "/" (a 404 naming GET /), or with the backslashes taken as separators (the queue was paused).
      ['rawPath undefined', { ...pause, rawPath: undefined }, /rawPath is not a path/],
      ['rawPath a number', { ...pause, rawPath: 5 }, /rawPath is not a path/],
      ['rawPath relative', { ...pause, rawPath: 'healthz' }, /rawPath is not a path/],
      ['rawPath with backslashes', { ...pause, rawPath: '/queues\\email\\pause' }, /rawPath has a backslash/],
      ['a REST API path with a backslash', { ...rest, path: '/jobs\\1' }, /path has a backslash/],
      ['a REST API event with no path', { ...rest, path: undefined }, /path is not a path/],
      // Its stack was logged ("values.map is not a function") and the message said nothing of the cause.
      ['multiValueQueryStringParameters not arrays', { ...rest, path: '/jobs', multiValueQueryStringParameters: { limit: '5' } }, /multiValueQueryStringParameters\["limit"\] is not an array/],
      ['multiValueQueryStringParameters holding a number', { ...rest, path: '/jobs', multiValueQueryStringParameters: { limit: [5] } }, /multiValueQueryStringParameters\["limit"\] has a value that is not a string/],
      ['queryStringParameters holding an object', { ...rest, path: '/jobs', queryStringParameters: { limit: { n: 5 } } }, /queryStringParameters\["limit"\] has a value that is not a string/],
    ];
    // A payload 2.0 event without a rawPath key is read as a REST API event (path, httpMethod): it names no method.
    cases.push(['no rawPath key', noRawPath, /names no HTTP method/]);
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      for (const [what, event, message] of cases) {
        const res = await handler(event as never, contextWithBudget(5000) as never);
        expect(res.statusCode, what).toBe(400);
        const { error } = JSON.parse(res.body) as { error: { code: string; message: string } };
        expect(error.code, what).toBe('bad_request');
        expect(error.message, what).toMatch(message);
      }
      expect(logged).not.toHaveBeenCalled();
    } finally {
      logged.mockRestore();
    }
    const paused = await db.pool.query(`select count(*)::int as n from workhorse.queues where paused`);
    expect(paused.rows[0].n).toBe(0);
  });

  it('answers a GET or HEAD that carries a body as workhorse serve does (the body ignored), with nothing logged', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const errors: unknown[] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void errors.push(args));
    try {
      const events: [string, unknown, number][] = [
        ['a function URL GET', functionUrlEvent('GET', '/jobs', '{"x":1}', auth, 'limit=1'), 200],
        ['a function URL HEAD', functionUrlEvent('HEAD', '/healthz', 'x'), 200],
        ['a REST API GET with a base64 body', { httpMethod: 'GET', path: '/healthz', headers: {}, requestContext: {}, body: 'eA==', isBase64Encoded: true }, 200],
        ['an ALB GET', { httpMethod: 'GET', path: '/jobs', headers: auth, queryStringParameters: { limit: '1' }, requestContext: { elb: {} }, body: 'x', isBase64Encoded: false }, 200],
      ];
      for (const [what, event, status] of events) {
        const res = (await handler(event as never, contextWithBudget(5000) as never)) as { statusCode: number };
        expect(res.statusCode, what).toBe(status);
      }
    } finally {
      spy.mockRestore();
    }
    expect(errors).toEqual([]);
  });

  it('ticks on the configured budget when a hand-made context answers a time left that is not a number', async () => {
    const sig = await signRequest({ secret: SECRET, method: 'POST', path: '/tick', body: '' });
    const res = await handler(functionUrlEvent('POST', '/tick', '', sig) as never, { ...contextWithBudget(5000), getRemainingTimeInMillis: () => Number.NaN } as never);
    expect(res.statusCode, res.body).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ failed: 0 });
  });
});

// createHttpHandler with every credential given as a secret ARN: the
// signing secrets, the API token and DATABASE_URL are read from a local
// Secrets Manager endpoint (the real SDK, the service's JSON protocol), and
// the database is a cluster of this test's own that checks passwords. A
// rotated signing secret or token is picked up by the first request that
// uses it (that request is answered, not refused); a flood of bad requests
// re-reads each secret at most once per interval; a rotated database
// password costs one 503, then the next request logs in with the new one.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { createHttpHandler, type HttpHandler } from '../../src/http/lambda.js';
import { signRequest } from '../../src/signing/index.js';
import { startPasswordCluster, type PasswordCluster } from '../helpers/passwordCluster.js';
import { startSecretsManagerServer, useTestCredentials, type SecretsManagerServer } from '../helpers/secretsManagerServer.js';
import testApp from './fixtures/app.js';

let cluster: PasswordCluster;
let sm: SecretsManagerServer;

const secret = (label: string) => `${label}-${randomBytes(12).toString('hex')}`;

function event(method: string, path: string, body = '', headers: Record<string, string> = {}) {
  const [rawPath, rawQueryString = ''] = path.split('?');
  const domainName = 'abcdefghij.lambda-url.eu-west-1.on.aws';
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString,
    headers: { host: domainName, 'content-type': 'application/json', ...headers },
    requestContext: {
      domainName,
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '203.0.113.9', userAgent: 'edge/1.0' },
      requestId: randomBytes(6).toString('hex'),
      routeKey: '$default',
      stage: '$default',
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
    },
    body: body === '' ? null : body,
    isBase64Encoded: false,
  } as never;
}

const context = () => {
  const end = Date.now() + 10_000;
  return { functionName: 'workhorse-http', awsRequestId: randomBytes(4).toString('hex'), getRemainingTimeInMillis: () => end - Date.now() } as never;
};

async function signed(handler: HttpHandler, key: string, method = 'GET', path = '/jobs?limit=1') {
  const headers = await signRequest({ secret: key, method, path });
  return handler(event(method, path, '', headers), context());
}

const enqueue = (handler: HttpHandler, token: string) =>
  handler(
    event('POST', '/jobs', JSON.stringify({ type: 'email.send', payload: { to: 'a@example.com', subject: 'hi' } }), { authorization: `Bearer ${token}` }),
    context(),
  );

/** The secrets of one HTTP function (one container) and its handler. */
function httpFunction(o: { signing: string; token: string; next?: string; database: string; minRefreshMs?: number }) {
  const names = Object.fromEntries(['signing', 'token', 'next', 'database'].map((k) => [k, `wh/${k}-${randomBytes(3).toString('hex')}`]));
  const arns = {
    signing: sm.put(names.signing!, o.signing),
    token: sm.put(names.token!, o.token),
    database: sm.put(names.database!, o.database),
    next: o.next ? sm.put(names.next!, o.next) : undefined,
  };
  const handler = createHttpHandler(testApp, {
    env: {
      DATABASE_URL_SECRET_ARN: arns.database,
      WORKHORSE_SIGNING_SECRET_SECRET_ARN: arns.signing,
      ...(arns.next ? { WORKHORSE_SIGNING_SECRET_NEXT_SECRET_ARN: arns.next } : {}),
      WORKHORSE_API_TOKEN_SECRET_ARN: arns.token,
      // Signed requests may read (the signing secret alone is for POST /tick).
      WORKHORSE_SIGNED_SCOPES: 'read',
      WORKHORSE_SECRETS_ENDPOINT: sm.url,
      WORKHORSE_SECRETS_MIN_REFRESH_MS: String(o.minRefreshMs ?? 0),
    },
    overrides: { log: () => undefined },
  });
  return { handler, arns, rotate: (k: keyof typeof names, value: string) => sm.put(names[k]!, value) };
}

beforeAll(async () => {
  useTestCredentials();
  sm = await startSecretsManagerServer();
  cluster = await startPasswordCluster();
  await cluster.admin('create database app');
  await migrate({ connectionString: cluster.url('app') });
  await cluster.admin(`create role wh_http login password 'first-password' in role workhorse_runtime`);
});

afterAll(async () => {
  await sm?.close();
  await cluster?.stop();
});

const runtimeUrl = (password: string) => cluster.url('app', 'wh_http', password);

describe('the HTTP function with its credentials in Secrets Manager', () => {
  it('accepts requests signed with the current secret, with the next one, and with the token', async () => {
    const s = secret('current');
    const n = secret('next');
    const t = secret('token');
    const fn = httpFunction({ signing: s, next: n, token: t, database: runtimeUrl('first-password') });
    expect((await signed(fn.handler, s)).statusCode).toBe(200);
    expect((await signed(fn.handler, n)).statusCode).toBe(200);
    expect((await enqueue(fn.handler, t)).statusCode).toBe(201);
    expect((await signed(fn.handler, secret('stranger'))).statusCode).toBe(401);
    // Each read once at the cold start; the stranger's 401 read the three HTTP secrets once more.
    expect([fn.arns.signing, fn.arns.next!, fn.arns.token].map((a) => sm.reads(a))).toEqual([2, 2, 2]);
    expect(sm.reads(fn.arns.database)).toBe(1);
  });

  it('answers a request signed with a rotated secret by reading the secret again, and then refuses the old one', async () => {
    const old = secret('old');
    const fn = httpFunction({ signing: old, token: secret('token'), database: runtimeUrl('first-password') });
    expect((await signed(fn.handler, old)).statusCode).toBe(200);
    const rotated = secret('rotated');
    fn.rotate('signing', rotated);
    const res = await signed(fn.handler, rotated);
    expect(res.statusCode, res.body).toBe(200);
    expect(sm.reads(fn.arns.signing)).toBe(2);
    expect((await signed(fn.handler, old)).statusCode).toBe(401);
  });

  it('answers a request with a rotated bearer token the same way', async () => {
    const old = secret('token-old');
    const fn = httpFunction({ signing: secret('s'), token: old, database: runtimeUrl('first-password') });
    expect((await enqueue(fn.handler, old)).statusCode).toBe(201);
    const rotated = secret('token-new');
    fn.rotate('token', rotated);
    expect((await enqueue(fn.handler, rotated)).statusCode).toBe(201);
    expect(sm.reads(fn.arns.token)).toBe(2);
  });

  it('reads each secret at most once per refresh interval under a flood of bad requests, and never for requests without credentials', async () => {
    const fn = httpFunction({ signing: secret('s'), token: secret('t'), database: runtimeUrl('first-password'), minRefreshMs: 1000 });
    expect((await fn.handler(event('GET', '/jobs'), context())).statusCode).toBe(401);
    await new Promise((r) => setTimeout(r, 1100));
    for (let i = 0; i < 25; i++) expect((await fn.handler(event('GET', '/jobs'), context())).statusCode).toBe(401);
    expect(sm.reads(fn.arns.signing)).toBe(1);
    const bad = await Promise.all(Array.from({ length: 25 }, () => signed(fn.handler, secret('forged'))));
    for (let i = 0; i < 25; i++) bad.push(await enqueue(fn.handler, secret('guessed')));
    expect(bad.every((r) => r.statusCode === 401)).toBe(true);
    expect(sm.reads(fn.arns.signing)).toBe(2);
    expect(sm.reads(fn.arns.token)).toBe(2);
    // A failed credential never re-reads the database's secret.
    expect(sm.reads(fn.arns.database)).toBe(1);
  });

  it('after the database password is rotated and the old one revoked, answers one 503 and then logs in with the new one', async () => {
    const token = secret('token');
    await cluster.admin(`alter role wh_http password 'first-password'`);
    const fn = httpFunction({ signing: secret('s'), token, database: runtimeUrl('first-password') });
    expect((await enqueue(fn.handler, token)).statusCode).toBe(201);

    fn.rotate('database', runtimeUrl('second-password'));
    await cluster.admin(`alter role wh_http password 'second-password'`);
    // Sessions outlive a password change; end them, as a pooler or a restart would.
    await cluster.admin(`select pg_terminate_backend(pid) from pg_stat_activity where usename = 'wh_http'`);
    await new Promise((r) => setTimeout(r, 100));

    const refused = await enqueue(fn.handler, token);
    expect(refused.statusCode).toBe(503);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'database_login_refused' } });
    expect(refused.headers?.['retry-after']).toBe('1');
    const after = await enqueue(fn.handler, token);
    expect(after.statusCode, after.body).toBe(201);
    expect(sm.reads(fn.arns.database)).toBe(2);
    const users = await cluster.admin(`select distinct usename from pg_stat_activity where datname = 'app' and usename = 'wh_http'`);
    expect(users.rows).toEqual([{ usename: 'wh_http' }]);
  });

  it('reads the password again when the refused login was a signed POST /tick (its failure is the tick\'s), then ticks with the new one', async () => {
    const token = secret('token');
    const signing = secret('s');
    await cluster.admin(`alter role wh_http password 'tick-first'`);
    const fn = httpFunction({ signing, token, database: runtimeUrl('tick-first') });
    expect((await signed(fn.handler, signing, 'POST', '/tick')).statusCode).toBe(200);

    fn.rotate('database', runtimeUrl('tick-second'));
    await cluster.admin(`alter role wh_http password 'tick-second'`);
    await cluster.admin(`select pg_terminate_backend(pid) from pg_stat_activity where usename = 'wh_http'`);
    await new Promise((r) => setTimeout(r, 100));

    // It answered database_unreachable on every tick until the secret aged out (5 min): the refusal was not seen as the login's.
    const refused = await signed(fn.handler, signing, 'POST', '/tick');
    expect([refused.statusCode, JSON.parse(refused.body).error.code]).toEqual([503, 'database_login_refused']);
    const after = await signed(fn.handler, signing, 'POST', '/tick');
    expect(after.statusCode, after.body).toBe(200);
    expect(sm.reads(fn.arns.database)).toBe(2);
  });
});

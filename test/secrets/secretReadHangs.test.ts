// A Secrets Manager endpoint that takes the connection and never answers
// (a VPC route that black-holes) fails the read within READ_TIMEOUT_MS with
// a SecretUnavailableError. The SDK's requestTimeout only logged a warning,
// so a tick or an HTTP invocation waited until Lambda killed it. And a
// Lambda handler's read gives up within the invocation's time left: with 3 s
// left, a tick waited the read's own 8 s, and Lambda killed it first.
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SecretUnavailableError } from '../../src/errors.js';
import { defineApp } from '../../src/app/defineApp.js';
import { createHttpHandler } from '../../src/http/lambda.js';
import { lambdaEnvironment } from '../../src/secrets/lambdaEnvironment.js';
import { createTickHandler } from '../../src/tick/handler.js';
import { READ_TIMEOUT_MS } from '../../src/secrets/secretsManager.js';
import { useTestCredentials } from '../helpers/secretsManagerServer.js';

let server: Server;
let url: string;
const sockets = new Set<Socket>();

beforeAll(async () => {
  useTestCredentials();
  server = createServer((s) => {
    sockets.add(s);
    s.on('data', () => undefined); // reads the request, answers nothing
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => server.close(() => r()));
});

it('fails a read from an endpoint that never answers with SecretUnavailableError, in time', async () => {
  const arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:wh/db-AbCdEf';
  const environment = lambdaEnvironment({ env: { DATABASE_URL_SECRET_ARN: arn, WORKHORSE_SECRETS_ENDPOINT: url } });
  const started = Date.now();
  const err = (await environment.current().catch((e: unknown) => e)) as Error;
  expect(err).toBeInstanceOf(SecretUnavailableError);
  expect(err.message).toMatch(/DATABASE_URL/);
  expect(err.message).toMatch(/did not answer within/);
  expect(Date.now() - started).toBeLessThan(READ_TIMEOUT_MS + 5_000);
}, 30_000);

it('fails a tick handler\'s first read within the invocation\'s time left, not the read\'s own 8 s', async () => {
  const arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:wh/db-AbCdEf';
  // The handler reads the process's environment: DATABASE_URL (set where the tests run on a server of
  // their own) beside DATABASE_URL_SECRET_ARN would be a ConfigError before any read.
  const saved = { arn: process.env.DATABASE_URL_SECRET_ARN, endpoint: process.env.WORKHORSE_SECRETS_ENDPOINT, url: process.env.DATABASE_URL };
  process.env.DATABASE_URL_SECRET_ARN = arn;
  process.env.WORKHORSE_SECRETS_ENDPOINT = url;
  delete process.env.DATABASE_URL;
  try {
    const handler = createTickHandler(defineApp({ jobs: [], configure: () => undefined }));
    const deadline = Date.now() + 3_000;
    const err = (await handler({}, { getRemainingTimeInMillis: () => deadline - Date.now() }).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(SecretUnavailableError);
    expect(err.message).toMatch(/DATABASE_URL: could not read secret .*: Secrets Manager did not answer within the \d+ ms the invocation had left/);
    expect(Date.now()).toBeLessThan(deadline);
  } finally {
    if (saved.arn === undefined) delete process.env.DATABASE_URL_SECRET_ARN;
    else process.env.DATABASE_URL_SECRET_ARN = saved.arn;
    if (saved.endpoint === undefined) delete process.env.WORKHORSE_SECRETS_ENDPOINT;
    else process.env.WORKHORSE_SECRETS_ENDPOINT = saved.endpoint;
    if (saved.url !== undefined) process.env.DATABASE_URL = saved.url;
  }
}, 30_000);

it('fails an HTTP handler\'s first read within the invocation\'s time left too', async () => {
  const arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:wh/db-AbCdEf';
  const handler = createHttpHandler(undefined, { env: { DATABASE_URL_SECRET_ARN: arn, WORKHORSE_SECRETS_ENDPOINT: url } });
  const deadline = Date.now() + 3_000;
  const context = { getRemainingTimeInMillis: () => deadline - Date.now() } as unknown as Parameters<typeof handler>[1];
  const event = { version: '2.0', rawPath: '/healthz', rawQueryString: '', headers: {}, requestContext: { http: { method: 'GET', path: '/healthz' } }, isBase64Encoded: false };
  const err = (await handler(event as unknown as Parameters<typeof handler>[0], context).catch((e: unknown) => e)) as Error;
  expect(err).toBeInstanceOf(SecretUnavailableError);
  expect(Date.now()).toBeLessThan(deadline);
}, 30_000);

// A Secrets Manager endpoint that takes the connection and never answers
// (a VPC route that black-holes) fails the read within READ_TIMEOUT_MS with
// a SecretUnavailableError. The SDK's requestTimeout only logged a warning,
// so a tick or an HTTP invocation waited until Lambda killed it.
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SecretUnavailableError } from '../../src/errors.js';
import { lambdaEnvironment } from '../../src/secrets/lambdaEnvironment.js';
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

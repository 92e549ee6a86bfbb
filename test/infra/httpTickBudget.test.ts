// The HTTP function's POST /tick budget as the construct deploys it: the
// function's own timeout (POST /tick then keeps 1 s back for the response),
// not the 10 s default meant for servers. Read from a real synth, then fed to
// the HTTP handler with a Function URL event signed as the edge example
// signs its kick: the example app's welcome email (timeoutMs 10 s) runs.
import { Template } from 'aws-cdk-lib/assertions';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import exampleApp from '../../examples/app.js';
import { EXAMPLE_APP_MODULE } from '../../infra/exampleStack.js';
import { WorkhorseTickWorker } from '../../infra/WorkhorseTickWorker.js';
import { createClient } from '../../src/index.js';
import { createHttpHandler } from '../../src/http/lambda.js';
import { signRequest } from '../../src/signing/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { logicalId, newStack, removeTestAssemblies, type Json } from './template.js';

const SECRET = 'edge-signing-secret-0123456789';
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  removeTestAssemblies();
  await db.drop();
});

function httpEnvironment(http?: { timeoutSeconds: number }): Record<string, unknown> {
  const stack = newStack();
  new WorkhorseTickWorker(stack, 'Workhorse', {
    app: EXAMPLE_APP_MODULE,
    database: { secret: new Secret(stack, 'Db') },
    runtimeDatabase: { secret: new Secret(stack, 'RuntimeDb') },
    ...(http ? { http } : {}),
  });
  const template = Template.fromStack(stack);
  const fn = template.findResources('AWS::Lambda::Function')[logicalId(template, 'AWS::Lambda::Function', 'WorkhorseHttp')] as Json;
  return fn.Properties.Environment.Variables as Record<string, unknown>;
}

function functionUrlEvent(headers: Record<string, string>) {
  const domainName = 'abcdefghij.lambda-url.eu-west-1.on.aws';
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: '/tick',
    rawQueryString: '',
    headers: { host: domainName, 'content-type': 'application/json', ...headers },
    requestContext: {
      domainName,
      http: { method: 'POST', path: '/tick', protocol: 'HTTP/1.1', sourceIp: '203.0.113.9', userAgent: 'edge/1.0' },
      requestId: 'req-1',
      routeKey: '$default',
      stage: '$default',
      timeEpoch: Date.now(),
    },
    body: null,
    isBase64Encoded: false,
  };
}

describe('the HTTP function’s tick budget', () => {
  it('is the function’s timeout, and follows http.timeoutSeconds', () => {
    expect(httpEnvironment().WORKHORSE_HTTP_TICK_BUDGET_MS).toBe('30000');
    expect(httpEnvironment({ timeoutSeconds: 120 }).WORKHORSE_HTTP_TICK_BUDGET_MS).toBe('120000');
  });

  /** Enqueues the example's welcome email, then kicks POST /tick as examples/edge-enqueue.ts does (signed, no body). */
  async function enqueueAndKick(env: Record<string, string>): Promise<{ statusCode: number; body: string }> {
    const client = createClient({ connectionString: db.url, jobs: exampleApp.jobs, poolMax: 1 });
    await client.enqueue('email.welcome', { to: 'ada@example.com', name: 'Ada' });
    await client.close();
    const handler = createHttpHandler(exampleApp, { env: { DATABASE_URL: db.url, WORKHORSE_SIGNING_SECRET: SECRET, ...env } });
    const headers = await signRequest({ secret: SECRET, method: 'POST', path: '/tick', body: '' });
    const end = Date.now() + 30_000;
    return handler(functionUrlEvent(headers) as never, { getRemainingTimeInMillis: () => end - Date.now() } as never);
  }

  it('lets a signed kick run the example’s welcome email (timeoutMs 5 s) in the default 30 s function', async () => {
    const res = await enqueueAndKick({ WORKHORSE_HTTP_TICK_BUDGET_MS: httpEnvironment().WORKHORSE_HTTP_TICK_BUDGET_MS as string });
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ claimed: 1, succeeded: 1, skippedTimeout: 0 });
  }, 30_000);

  it('runs it on the default 10 s budget too (workhorse serve\'s): with a 10 s timeout it was skipped', async () => {
    const res = await enqueueAndKick({});
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ claimed: 1, succeeded: 1, skippedTimeout: 0 });
  }, 30_000);
});

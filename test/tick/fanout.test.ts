// Fan-out: with a backlog larger than one tick can finish, the tick invokes
// further ticks asynchronously through the real @aws-sdk/client-lambda,
// pointed at a local HTTP server that speaks Lambda's Invoke API; with no
// backlog it invokes none; a tick at the generation limit never fans out.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createClient, type Client } from '../../src/index.js';
import { SleepJob } from '../fixtures/tick-app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { fixtureApp, freshHandler, lambdaContext, scheduledEvent } from './support.js';

interface Invocation {
  functionName: string;
  invocationType: string | undefined;
  payload: unknown;
}

let db: TestDatabase;
let client: Client;
let server: Server;
let endpoint: string;
const invocations: Invocation[] = [];
/** Answers every invocation 429, as a throttled Lambda API does. */
let throttled = false;
const FUNCTION = 'workhorse-tick-test';

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [SleepJob], poolMax: 2 });
  // POST /2015-03-31/functions/{name}/invocations, answered like an accepted async invoke.
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const m = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/.exec(req.url ?? '');
      if (req.method !== 'POST' || !m) {
        res.writeHead(404).end();
        return;
      }
      if (throttled) {
        res.writeHead(429, { 'content-type': 'application/json', 'x-amzn-errortype': 'TooManyRequestsException', 'x-amzn-requestid': 'test' }).end(JSON.stringify({ message: 'Rate exceeded', Type: 'User' }));
        return;
      }
      invocations.push({
        functionName: decodeURIComponent(m[1]!),
        invocationType: req.headers['x-amz-invocation-type'] as string | undefined,
        payload: JSON.parse(body),
      });
      res.writeHead(202, { 'content-type': 'application/json', 'x-amzn-requestid': 'test' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await client.close();
  await db.drop();
});

beforeEach(async () => {
  invocations.length = 0;
  await db.pool.query('delete from workhorse.jobs');
});

const env = () => ({
  DATABASE_URL: db.url,
  WORKHORSE_APP: fixtureApp,
  WORKHORSE_HEARTBEAT_MS: '500',
  WORKHORSE_CONCURRENCY: '2',
  WORKHORSE_MAX_FANOUT: '3',
  WORKHORSE_MAX_GENERATION: '2',
  WORKHORSE_LAMBDA_ENDPOINT: endpoint,
  // Fan-out invokes the function itself, as on Lambda.
  AWS_LAMBDA_FUNCTION_NAME: FUNCTION,
});

// The SDK reads its region and credentials from the environment.
process.env.AWS_REGION = 'us-east-1';
process.env.AWS_ACCESS_KEY_ID = 'AKIDTEST';
process.env.AWS_SECRET_ACCESS_KEY = 'test-secret';

/** Jobs that take 200 ms each: 2 at a time, a 3 s tick finishes about 20 of them. */
async function backlog(n: number): Promise<void> {
  await client.enqueueMany(Array.from({ length: n }, () => ({ job: SleepJob, payload: { ms: 200 }, options: { timeoutMs: 1000 } })));
}

describe('fan-out', () => {
  it('invokes maxFanout further ticks (InvocationType Event, payload { generation }) when the backlog is far beyond one tick', async () => {
    await backlog(300);
    const handler = await freshHandler(env());
    const summary = await handler(scheduledEvent(), lambdaContext(3000));

    expect(summary.fannedOut).toBe(3);
    expect(invocations).toHaveLength(3);
    for (const inv of invocations) {
      expect(inv).toEqual({ functionName: FUNCTION, invocationType: 'Event', payload: { generation: 1 } });
    }
  });

  it('passes the next generation on: a tick of generation 1 invokes ticks of generation 2', async () => {
    await backlog(300);
    const handler = await freshHandler(env());
    const summary = await handler({ generation: 1 }, lambdaContext(3000));
    expect(summary.fannedOut).toBe(3);
    expect(invocations.map((i) => i.payload)).toEqual([{ generation: 2 }, { generation: 2 }, { generation: 2 }]);
  });

  it('never fans out from a tick at the generation limit, whatever the backlog', async () => {
    await backlog(300);
    const handler = await freshHandler(env());
    const summary = await handler({ generation: 2 }, lambdaContext(3000));
    expect(summary.claimed).toBeGreaterThan(0);
    expect(summary.fannedOut).toBe(0);
    expect(invocations).toEqual([]);
  });

  it('sends nothing when this tick can finish the backlog itself', async () => {
    await backlog(4);
    const handler = await freshHandler(env());
    const summary = await handler(scheduledEvent(), lambdaContext(3000));
    expect(summary).toMatchObject({ claimed: 4, succeeded: 4, fannedOut: 0 });
    expect(invocations).toEqual([]);
  });

  it('logs invocations the Lambda API throttled as one line, and the tick goes on', async () => {
    await backlog(300);
    const handler = await freshHandler(env());
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    throttled = true;
    try {
      const summary = await handler(scheduledEvent(), lambdaContext(3000));
      expect(summary.claimed).toBeGreaterThan(0);
      expect(summary.fannedOut).toBe(0);
      const lines = logged.mock.calls.filter((c) => String(c[0]).includes('fan-out'));
      // An AggregateError of the SDK's errors was printed whole: 57 lines of their stacks and metadata.
      expect(lines).toEqual([[expect.stringMatching(/^\[workhorse\] tick fan-out failed: FanoutFailedError: 3 of 3 fan-out invocations failed \(the first: TooManyRequestsException: Rate exceeded\)$/)]]);
    } finally {
      throttled = false;
      logged.mockRestore();
    }
  });

  it('is off unless configured: no maximum, no invocation', async () => {
    await backlog(300);
    const { WORKHORSE_MAX_FANOUT: _off, ...rest } = env();
    const handler = await freshHandler(rest);
    const summary = await handler(scheduledEvent(), lambdaContext(2500));
    expect(summary.claimed).toBeGreaterThan(0);
    expect(summary.fannedOut).toBe(0);
    expect(invocations).toEqual([]);
  });
});

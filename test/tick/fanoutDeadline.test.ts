// Fan-out against a Lambda API that takes the connection and never answers
// (a function in a VPC with no route to the Lambda endpoint looks like
// this): the tick gives the invocations up when it aborts its handlers and
// still returns before its deadline, deregistered, with its jobs settled.
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/index.js';
import { SleepJob } from '../fixtures/tick-app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { fixtureApp, freshHandler, lambdaContext, scheduledEvent } from './support.js';

let db: TestDatabase;
let client: Client;
let server: Server;
let endpoint: string;
const sockets = new Set<Socket>();
let requests = 0;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [SleepJob], poolMax: 2 });
  // Reads the request and says nothing back.
  server = createServer((socket) => {
    sockets.add(socket);
    socket.once('data', () => requests++);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  endpoint = `http://127.0.0.1:${address.port}`;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => server.close(resolve));
  await client.close();
  await db.drop();
});

// The SDK reads its region and credentials from the environment.
process.env.AWS_REGION = 'us-east-1';
process.env.AWS_ACCESS_KEY_ID = 'AKIDTEST';
process.env.AWS_SECRET_ACCESS_KEY = 'test-secret';

describe('fan-out to a Lambda API that never answers', () => {
  it('gives the invocations up and returns before the deadline, deregistered', async () => {
    await client.enqueueMany(Array.from({ length: 300 }, () => ({ job: SleepJob, payload: { ms: 200 }, options: { timeoutMs: 1000 } })));
    const handler = await freshHandler({
      DATABASE_URL: db.url,
      WORKHORSE_APP: fixtureApp,
      WORKHORSE_HEARTBEAT_MS: '500',
      WORKHORSE_CONCURRENCY: '2',
      WORKHORSE_MAX_FANOUT: '3',
      WORKHORSE_MAX_GENERATION: '2',
      WORKHORSE_LAMBDA_ENDPOINT: endpoint,
      AWS_LAMBDA_FUNCTION_NAME: 'workhorse-tick-test',
    });
    const context = lambdaContext(3000);
    const outcome = await Promise.race([
      handler(scheduledEvent(), context).then((summary) => ({ summary, at: Date.now() })),
      new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 8000)),
    ]);

    expect(outcome).not.toBe('hung');
    const { summary, at } = outcome as Exclude<typeof outcome, 'hung'>;
    expect(requests).toBeGreaterThan(0);
    expect(at).toBeLessThan(context.deadline);
    expect(summary.claimed).toBeGreaterThan(0);
    expect(summary.fannedOut).toBe(0);
    const registry = await db.pool.query(`select count(*)::int as n from workhorse.worker_registry where kind = 'tick'`);
    expect(registry.rows[0].n).toBe(0);
    const running = await db.pool.query(`select count(*)::int as n from workhorse.jobs where status = 'running'`);
    expect(running.rows[0].n).toBe(0);
  }, 20_000);
});

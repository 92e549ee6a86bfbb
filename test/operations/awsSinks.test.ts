// The Lambda and EventBridge sinks against a loopback server that speaks
// their wire shapes: Lambda's REST invoke (POST /2015-03-31/functions/{name}/
// invocations, X-Amz-Invocation-Type: Event, answered 202) and EventBridge's
// JSON 1.1 PutEvents (X-Amz-Target: AWSEvents.PutEvents, answered with
// FailedEntryCount and Entries). A refused entry or an error status is a
// failed delivery, retried later: one request per counted attempt (the SDK
// retried three times inside each), and a 429's Retry-After honoured as a
// webhook's is.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { Client } from '../../src/client/client.js';
import { deliverOutbox } from '../../src/outbox/deliver.js';
import { eventBridgeSink } from '../../src/outbox/eventBridgeSink.js';
import { lambdaSink } from '../../src/outbox/lambdaSink.js';
import { parseOutboxOptions } from '../../src/outbox/outboxOptions.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

interface Call {
  service: 'lambda' | 'eventbridge';
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

let db: TestDatabase;
let client: Client;
let server: Server;
let endpoint: string;
const calls: Call[] = [];
let refuse = { lambda: false, eventbridge: false, emptyAnswer: false, throttle: false };

// The SDK reads its region and credentials from the environment.
process.env.AWS_REGION = 'us-east-1';
process.env.AWS_ACCESS_KEY_ID = 'AKIDTEST';
process.env.AWS_SECRET_ACCESS_KEY = 'test-secret';

beforeAll(async () => {
  db = await createTestDatabase();
  client = new Client({ connectionString: db.url });
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d: Buffer) => (raw += d.toString()));
    req.on('end', () => {
      const lambda = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/.exec(req.url ?? '');
      if (req.method === 'POST' && lambda) {
        calls.push({ service: 'lambda', path: req.url!, headers: req.headers, body: JSON.parse(raw) });
        if (refuse.throttle) {
          res
            .writeHead(429, { 'content-type': 'application/json', 'x-amzn-errortype': 'TooManyRequestsException', 'retry-after': '40' })
            .end(JSON.stringify({ message: 'Rate Exceeded.', Reason: 'CallerRateLimitExceeded' }));
          return;
        }
        if (refuse.lambda) {
          res.writeHead(500, { 'content-type': 'application/json', 'x-amzn-errortype': 'ServiceException' }).end(JSON.stringify({ message: 'down' }));
          return;
        }
        res.writeHead(202, { 'content-type': 'application/json', 'x-amzn-requestid': 'req-1' }).end();
        return;
      }
      if (req.method === 'POST' && req.headers['x-amz-target'] === 'AWSEvents.PutEvents') {
        const body = JSON.parse(raw);
        calls.push({ service: 'eventbridge', path: req.url!, headers: req.headers, body });
        if (refuse.emptyAnswer) {
          res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': 'req-3' }).end('{}');
          return;
        }
        const entries = body.Entries.map((_: unknown, i: number) =>
          refuse.eventbridge ? { ErrorCode: 'ThrottlingException', ErrorMessage: 'slow down' } : { EventId: `eb-${calls.length}-${i}` },
        );
        res
          .writeHead(200, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': 'req-2' })
          .end(JSON.stringify({ FailedEntryCount: refuse.eventbridge ? entries.length : 0, Entries: entries }));
        return;
      }
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
beforeEach(async () => {
  calls.length = 0;
  refuse = { lambda: false, eventbridge: false, emptyAnswer: false, throttle: false };
  await db.pool.query('delete from workhorse.outbox_events');
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  await client.close();
  await db.drop();
});

const options = () =>
  parseOutboxOptions({
    sinks: [
      lambdaSink({ functionName: 'order-handler', endpoint, topics: ['order.*'] }),
      eventBridgeSink({ eventBusName: 'orders-bus', source: 'shop', endpoint }),
    ],
    backoff: { baseMs: 0, maxMs: 0 },
  });

it('invokes the function asynchronously and puts the event on the bus, each with the event as JSON', async () => {
  const { id } = await client.publish('order.created', { orderId: 42 }, { key: 'order-42' });
  const r = await deliverOutbox(client, options());
  expect(r.delivered).toBe(1);
  const lambda = calls.find((c) => c.service === 'lambda')!;
  expect(lambda.path).toBe('/2015-03-31/functions/order-handler/invocations');
  expect(lambda.headers['x-amz-invocation-type']).toBe('Event');
  expect(String(lambda.headers.authorization)).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDTEST\//);
  expect(lambda.body).toMatchObject({ id, topic: 'order.created', key: 'order-42', payload: { orderId: 42 }, attempt: 1 });
  const eb = calls.find((c) => c.service === 'eventbridge')!;
  expect(eb.body.Entries).toHaveLength(1);
  expect(eb.body.Entries[0]).toMatchObject({ EventBusName: 'orders-bus', Source: 'shop', DetailType: 'order.created' });
  expect(JSON.parse(eb.body.Entries[0].Detail)).toMatchObject({ id, payload: { orderId: 42 } });
});

it('takes only the topics a sink names', async () => {
  await client.publish('user.created', {});
  await deliverOutbox(client, options());
  expect(calls.map((c) => c.service)).toEqual(['eventbridge']);
});

it('retries an event EventBridge refused, or that Lambda failed, until both accept it', async () => {
  const { id } = await client.publish('order.paid', {});
  refuse = { lambda: false, eventbridge: true, emptyAnswer: false, throttle: false };
  expect(await deliverOutbox(client, options(), { maxBatches: 1 })).toMatchObject({ delivered: 0, retried: 1 });
  const [row] = (await db.pool.query('select attempts, last_error from workhorse.outbox_events where id = $1', [id])).rows;
  expect(row.attempts).toBe(1);
  expect(row.last_error.message).toMatch(/EventBridge refused the event: ThrottlingException/);
  refuse = { lambda: true, eventbridge: false, emptyAnswer: false, throttle: false };
  expect(await deliverOutbox(client, options(), { maxBatches: 1 })).toMatchObject({ delivered: 0, retried: 1 });
  // The SDK's error type and HTTP status are in the last error, not only its message ("down").
  const [failed] = (await db.pool.query('select last_error from workhorse.outbox_events where id = $1', [id])).rows;
  expect(failed.last_error.message).toMatch(/ServiceException, HTTP 500: down/);
  refuse = { lambda: false, eventbridge: false, emptyAnswer: false, throttle: false };
  expect(await deliverOutbox(client, options())).toMatchObject({ delivered: 1 });
  const lambdaAttempts = calls.filter((c) => c.service === 'lambda').map((c) => c.body.attempt);
  expect(lambdaAttempts.slice(-1)).toEqual([3]);
});

it("sends one request per counted attempt, and waits the Retry-After a throttled Lambda asks for", async () => {
  const { id } = await client.publish('order.paid', {});
  refuse = { lambda: false, eventbridge: false, emptyAnswer: false, throttle: true };
  const throttled = parseOutboxOptions({ sinks: [lambdaSink({ functionName: 'order-handler', endpoint })], backoff: { baseMs: 10, maxMs: 3_600_000 } });
  expect(await deliverOutbox(client, throttled, { maxBatches: 1 })).toMatchObject({ delivered: 0, retried: 1 });
  expect(calls.filter((c) => c.service === 'lambda')).toHaveLength(1);
  const [row] = (await db.pool.query('select attempts, last_error, extract(epoch from available_at - now()) as wait_s from workhorse.outbox_events where id = $1', [id])).rows;
  expect(row.attempts).toBe(1);
  expect(row.last_error.message).toMatch(/TooManyRequestsException, HTTP 429: Rate Exceeded\./);
  // 40 s asked for, where the backoff alone says 10 ms.
  expect(Number(row.wait_s)).toBeGreaterThan(35);
});

it('does not count as delivered a PutEvents answer without an EventId (a proxy answering {})', async () => {
  refuse.emptyAnswer = true;
  const sink = eventBridgeSink({ eventBusName: 'orders-bus', endpoint });
  const event = { id: '1', namespace: 'default', topic: 't', key: null, payload: {}, publishedAt: new Date().toISOString(), attempt: 1 };
  await expect(sink.deliver(event, new AbortController().signal)).rejects.toThrow(/answered without an EventId/);
});

// Sink options are checked when the sink is built, as a ConfigError naming
// the field: a webhook URL that does not parse (it was a TypeError) or that
// carries credentials (fetch refused every delivery to it), topics
// that can never match a topic (they were kept, and the sink silently took
// nothing), extra headers fetch refuses (they were kept, and every delivery
// failed until the event was dead), and the same for what the AWS sinks
// would send (a region or function name the SDK refuses at every call, a
// bus name PutEvents refuses, a source EventBridge keeps for AWS). A
// custom sink's topics and the outbox backoff are checked the same way
// when the outbox options are parsed. A valid header still reaches the
// receiver, signed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { parseOutboxOptions } from '../../src/outbox/outboxOptions.js';
import { eventBridgeSink } from '../../src/outbox/eventBridgeSink.js';
import { lambdaSink } from '../../src/outbox/lambdaSink.js';
import { webhookSink } from '../../src/outbox/webhookSink.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhookReceiver.js';

const SECRET = 'sink-options-secret';

function configPath(f: () => unknown): unknown[] {
  let thrown: unknown;
  try {
    f();
  } catch (err) {
    thrown = err;
  }
  expect(thrown).toBeInstanceOf(ConfigError);
  return (thrown as ConfigError).issues[0]!.path;
}

let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver(SECRET);
});

afterAll(async () => {
  await receiver.close();
});

describe('sink options', () => {
  it.each(['not a url', '', 'ftp://x/y', 'http//x'])('webhookSink refuses url %j', (url) => {
    expect(configPath(() => webhookSink({ url, secret: SECRET }))).toEqual(['url']);
  });

  it.each(['https://user:pass@hooks.example.com/in', 'http://token@127.0.0.1:8080/'])('webhookSink refuses url %j: fetch refuses credentials in a URL', (url) => {
    expect(configPath(() => webhookSink({ url, secret: SECRET }))).toEqual(['url']);
    // What each delivery would have met:
    expect(() => new Request(url)).toThrow(/includes credentials/);
  });

  it.each([['a b'], [''], ['order.**'], ['*order'], ['x'.repeat(201)]])('every sink refuses the topic %j', (topic) => {
    expect(configPath(() => webhookSink({ url: receiver.url, secret: SECRET, topics: [topic] }))).toEqual(['topics', 0]);
    expect(configPath(() => lambdaSink({ functionName: 'f', topics: [topic] }))).toEqual(['topics', 0]);
    expect(configPath(() => eventBridgeSink({ eventBusName: 'b', topics: [topic] }))).toEqual(['topics', 0]);
  });

  it.each([[{ 'a b': 'x' }], [{ 'x-key': 'a\r\nx-evil: 1' }], [{ 'x-key': 'a\u0000' }], [{ '': 'x' }]])('webhookSink refuses the headers %j', (headers) => {
    expect(configPath(() => webhookSink({ url: receiver.url, secret: SECRET, headers }))[0]).toBe('headers');
  });

  it.each([
    [{ 'transfer-encoding': 'chunked' }],
    [{ Expect: '100-continue' }],
    [{ upgrade: 'websocket' }],
    [{ 'keep-alive': 'timeout=5' }],
    [{ 'content-length': '5' }],
    [{ 'x-key': 'euro \u20ac' }],
    [{ Connection: 'upgrade' }],
    [{ connection: 'keep-alive, close' }],
    [{ Host: 'other.example.com' }],
  ])('webhookSink refuses the headers %j, which fetch will not send as given', (headers) => {
    const name = Object.keys(headers)[0]!;
    expect(configPath(() => webhookSink({ url: receiver.url, secret: SECRET, headers }))).toEqual(['headers', name]);
  });

  it.each([[{ 'Content-Type': 'text/plain' }], [{ 'X-Workhorse-Signature': 'x' }]])('webhookSink refuses the headers %j, which it sets itself', (headers) => {
    const name = Object.keys(headers)[0]!;
    expect(configPath(() => webhookSink({ url: receiver.url, secret: SECRET, headers }))).toEqual(['headers', name]);
  });

  it('says a header under x-workhorse- is reserved, not that the sink sets that very header', () => {
    expect(() => webhookSink({ url: receiver.url, secret: SECRET, headers: { 'x-workhorse-foo': '1' } })).toThrow(
      /x-workhorse-foo: the webhook sink reserves the x-workhorse-\* headers \(its signature, timestamp and event id\)/,
    );
  });

  it('webhookSink takes a connection header of close or keep-alive, which fetch sends', async () => {
    for (const v of ['close', 'Keep-Alive']) expect(webhookSink({ url: receiver.url, secret: SECRET, headers: { connection: v } }).name).toMatch(/^webhook http/);
    // What a delivery with another value meets:
    await expect(fetch(receiver.url, { method: 'POST', body: '{}', headers: { connection: 'upgrade' } })).rejects.toThrow();
  });

  it.each(['http://127.0.0.1:6000/in', 'http://hooks.example.com:25/', 'http://127.0.0.1:0/h'])('webhookSink refuses url %j: a port fetch will not connect to', async (url) => {
    expect(configPath(() => webhookSink({ url, secret: SECRET }))).toEqual(['url']);
    // What each delivery would have met:
    await expect(fetch(url, { method: 'POST', body: '{}' })).rejects.toThrow();
  });

  it.each(['a b', 'f\n', 'x'.repeat(171), 'arn:aws:lambda:us-east-1:12:function:f'])('lambdaSink refuses functionName %j', (functionName) => {
    expect(configPath(() => lambdaSink({ functionName }))).toEqual(['functionName']);
  });

  const name65 = 'a'.repeat(65);
  it.each([name65, `${name65}:prod`, `123456789012:function:${name65}`, `arn:aws:lambda:us-west-2:123456789012:function:${name65}:7`])(
    'lambdaSink refuses functionName %j: a function name over 64 characters',
    (functionName) => {
      let thrown: unknown;
      try {
        lambdaSink({ functionName });
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(ConfigError);
      expect((thrown as ConfigError).issues[0]!.path).toEqual(['functionName']);
      expect((thrown as ConfigError).message).toMatch(/functionName names a function longer than Lambda's limit of 64 characters/);
    },
  );

  const name64 = 'a'.repeat(64);
  it.each([
    'my-fn',
    'my_fn:prod',
    'my-fn:$LATEST',
    '123456789012:function:my-fn',
    'arn:aws:lambda:us-west-2:123456789012:function:my-fn:7',
    name64,
    `${name64}:${'p'.repeat(64)}`,
    `arn:aws-us-gov:lambda:us-gov-west-1:123456789012:function:${name64}:${'p'.repeat(40)}`,
  ])(
    'lambdaSink takes functionName %j',
    (functionName) => {
      expect(lambdaSink({ functionName }).name).toBe(`lambda ${functionName}`);
    },
  );

  it('the AWS sinks refuse a region or an endpoint the SDK cannot build a request from', () => {
    expect(configPath(() => lambdaSink({ functionName: 'f', region: 'not a region' }))).toEqual(['region']);
    expect(configPath(() => eventBridgeSink({ eventBusName: 'b', region: '-us-east-1' }))).toEqual(['region']);
    expect(configPath(() => lambdaSink({ functionName: 'f', endpoint: 'ftp://127.0.0.1/' }))).toEqual(['endpoint']);
    expect(configPath(() => eventBridgeSink({ eventBusName: 'b', endpoint: 'mailto:a@b.c' }))).toEqual(['endpoint']);
    expect(lambdaSink({ functionName: 'f', region: 'us-gov-west-1', endpoint: 'http://127.0.0.1:4566' }).name).toBe('lambda f');
  });

  it('eventBridgeSink refuses a bus name PutEvents refuses and a source starting with "aws."', () => {
    expect(configPath(() => eventBridgeSink({ eventBusName: 'b\nc' }))).toEqual(['eventBusName']);
    expect(configPath(() => eventBridgeSink({ eventBusName: 'my bus' }))).toEqual(['eventBusName']);
    expect(configPath(() => eventBridgeSink({ eventBusName: 'b'.repeat(257) }))).toEqual(['eventBusName']);
    expect(eventBridgeSink({ eventBusName: 'b'.repeat(256) }).name).toBe(`eventbridge ${'b'.repeat(256)}`);
    expect(configPath(() => eventBridgeSink({ eventBusName: 'b', source: 'aws.ec2' }))).toEqual(['source']);
    expect(eventBridgeSink({ eventBusName: 'arn:aws:events:us-east-1:123456789012:event-bus/orders', source: 'com.acme' }).name).toBe(
      'eventbridge arn:aws:events:us-east-1:123456789012:event-bus/orders',
    );
  });

  it.each([[['order.paid ']], [[]], [['']]])('the outbox refuses a custom sink whose topics %j can never match', (topics) => {
    const sink = { name: 'mine', topics, deliver: async () => undefined };
    const path = configPath(() => parseOutboxOptions({ sinks: [sink] }));
    expect(path.slice(0, 3)).toEqual(['sinks', 0, 'topics']);
  });

  it('the outbox takes a custom sink with valid topics, or none', () => {
    const deliver = async () => undefined;
    expect(parseOutboxOptions({ sinks: [{ name: 'a', topics: ['order.*'], deliver }, { name: 'b', deliver }] }).sinks).toHaveLength(2);
  });

  it('the outbox refuses a backoff whose baseMs exceeds its maxMs', () => {
    const sinks = [webhookSink({ url: receiver.url, secret: SECRET })];
    expect(configPath(() => parseOutboxOptions({ sinks, backoff: { baseMs: 10, maxMs: 1 } }))).toEqual(['backoff', 'baseMs']);
    expect(parseOutboxOptions({ sinks, backoff: { baseMs: 5, maxMs: 5 } }).backoff).toEqual({ baseMs: 5, maxMs: 5 });
  });

  it('takes exact topics, prefixes and "*", and a valid header reaches the receiver signed', async () => {
    const sink = webhookSink({ url: `${receiver.url}/hook`, secret: SECRET, topics: ['order.paid', 'order.*', '*'], headers: { 'x-api-key': 'k\t1' } });
    await sink.deliver(
      { id: '1', namespace: 'default', topic: 'order.paid', key: null, payload: { a: 1 }, publishedAt: new Date().toISOString(), attempt: 1 },
      new AbortController().signal,
    );
    expect(receiver.requests).toHaveLength(1);
    expect(receiver.requests[0]!.headers['x-api-key']).toBe('k\t1');
    expect(receiver.requests[0]!.signatureOk).toBe(true);
  });
});

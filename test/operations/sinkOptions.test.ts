// Sink options are checked when the sink is built, as a ConfigError naming
// the field: a webhook URL that does not parse (it was a TypeError) or that
// carries credentials (fetch refused every delivery to it), topics
// that can never match a topic (they were kept, and the sink silently took
// nothing), extra headers fetch refuses (they were kept, and every delivery
// failed until the event was dead). A valid header still reaches the
// receiver, signed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
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

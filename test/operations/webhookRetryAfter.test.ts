// A receiver that answers 429 or 503 with Retry-After asks for quiet: the
// event's next try waits at least that long (capped by the outbox's
// backoff.maxMs), where the backoff alone tried it again after a second.
// The attempt still counts, and the last error says what was asked. A
// custom sink asks the same by throwing SinkRetryAfterError. Real HTTP on
// loopback and a real PostgreSQL.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/client.js';
import { SinkRetryAfterError } from '../../src/index.js';
import { deliverOutbox } from '../../src/outbox/deliver.js';
import { parseOutboxOptions, type OutboxOptions } from '../../src/outbox/outboxOptions.js';
import { parseRetryAfter } from '../../src/outbox/retryAfter.js';
import { webhookSink } from '../../src/outbox/webhookSink.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const SECRET = 'webhook-retry-after-secret-0123456789';
let db: TestDatabase;
let client: Client;
let server: Server;
/** What the receiver answers next: a status and its Retry-After header (or none). */
let answer: { status: number; retryAfter?: string } = { status: 200 };

beforeAll(async () => {
  db = await createTestDatabase();
  client = new Client({ connectionString: db.url });
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(answer.status, answer.retryAfter === undefined ? {} : { 'retry-after': answer.retryAfter });
      res.end(answer.status === 200 ? 'ok' : 'slow down');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await client.close();
  await db.drop();
});
beforeEach(async () => {
  await db.pool.query('delete from workhorse.outbox_events');
});

const url = () => `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;

/** Publishes one event, delivers it once, and reads back how long until its next try (ms, from the database's clock) and its last error. */
async function failOnce(options: Partial<OutboxOptions> = {}): Promise<{ dueInMs: number; attempts: number; message: string; retryAfterMs: unknown; nextRetryInMs: number | null }> {
  const { id } = await client.publish('retry.after', { n: 1 });
  const o = parseOutboxOptions({ sinks: [webhookSink({ url: url(), secret: SECRET })], maxAttempts: 5, ...options });
  const r = await deliverOutbox(client, o, { maxBatches: 1 });
  expect(r).toMatchObject({ delivered: 0, retried: 1 });
  const { rows } = await db.pool.query<{ due_in_ms: number; attempts: number; last_error: { message: string; retryAfterMs?: unknown } }>(
    "select (extract(epoch from available_at - now()) * 1000)::float8 as due_in_ms, attempts, last_error from workhorse.outbox_events where id = $1",
    [id],
  );
  const row = rows[0]!;
  return { dueInMs: row.due_in_ms, attempts: row.attempts, message: row.last_error.message, retryAfterMs: row.last_error.retryAfterMs, nextRetryInMs: r.nextRetryInMs };
}

describe('a webhook answering with Retry-After', () => {
  it('in seconds: the next try waits that long, not the 1 s backoff, and the attempt counts', async () => {
    answer = { status: 429, retryAfter: '120' };
    const r = await failOnce();
    expect(r.attempts).toBe(1);
    expect(r.dueInMs).toBeGreaterThan(110_000);
    expect(r.dueInMs).toBeLessThanOrEqual(120_000);
    expect(r.retryAfterMs).toBe(120_000);
    expect(r.nextRetryInMs).toBe(120_000);
    expect(r.message).toMatch(/: webhook answered 429: slow down \(Retry-After: 120 s\)$/);
  });

  it('as an HTTP-date: the next try waits until then', async () => {
    answer = { status: 503, retryAfter: new Date(Date.now() + 90_000).toUTCString() };
    const r = await failOnce();
    expect(r.dueInMs).toBeGreaterThan(80_000);
    expect(r.dueInMs).toBeLessThanOrEqual(91_000);
  });

  it('asking for longer than backoff.maxMs: waits maxMs', async () => {
    answer = { status: 429, retryAfter: '86400' };
    const r = await failOnce({ backoff: { baseMs: 1000, maxMs: 30_000 } });
    expect(r.dueInMs).toBeGreaterThan(25_000);
    expect(r.dueInMs).toBeLessThanOrEqual(30_000);
    expect(r.nextRetryInMs).toBe(30_000);
  });

  it('asking for less than the backoff, or something unreadable: the backoff stands', async () => {
    answer = { status: 503, retryAfter: '0' };
    expect((await failOnce({ backoff: { baseMs: 20_000, maxMs: 60_000 } })).dueInMs).toBeGreaterThan(15_000);
    answer = { status: 503, retryAfter: 'soon' };
    const r = await failOnce();
    expect(r.dueInMs).toBeLessThanOrEqual(1_000);
    expect(r.retryAfterMs).toBeUndefined();
    expect(r.message).toMatch(/: webhook answered 503: slow down$/);
  });
});

describe('a custom sink throwing SinkRetryAfterError', () => {
  it('waits what it asks for; the longest of several failed sinks counts', async () => {
    const { id } = await client.publish('retry.after', { n: 2 });
    const sink = (name: string, ms: number) => ({
      name,
      deliver: async () => {
        throw new SinkRetryAfterError(`${name} is throttled`, ms);
      },
    });
    const o = parseOutboxOptions({ sinks: [sink('a', 40_000), sink('b', 70_000)], maxAttempts: 5 });
    expect(await deliverOutbox(client, o, { maxBatches: 1 })).toMatchObject({ retried: 1, nextRetryInMs: 70_000 });
    const { rows } = await db.pool.query<{ due_in_ms: number; last_error: { message: string; code?: string } }>(
      'select (extract(epoch from available_at - now()) * 1000)::float8 as due_in_ms, last_error from workhorse.outbox_events where id = $1',
      [id],
    );
    expect(rows[0]!.due_in_ms).toBeGreaterThan(60_000);
    expect(rows[0]!.last_error.message).toBe('a: a is throttled; b: b is throttled');
  });
});

describe('parseRetryAfter', () => {
  it('reads delay-seconds and HTTP-dates, and nothing else', () => {
    const now = Date.parse('Mon, 07 Dec 2026 02:00:00 GMT');
    expect(parseRetryAfter('30', now)).toBe(30_000);
    expect(parseRetryAfter(' 5 ', now)).toBe(5_000);
    expect(parseRetryAfter('Mon, 07 Dec 2026 02:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('Mon, 07 Dec 2026 01:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('99999999999', now)).toBe(86_400_000);
    for (const bad of [null, '', '-5', '1.5', '+3', 'soon', 'Mon, garbage']) expect(parseRetryAfter(bad, now)).toBeUndefined();
  });
});

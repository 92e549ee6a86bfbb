// A payload key named "__proto__" (an ordinary own key to JSON.parse) was
// dropped by the job's schema without a word: zod's records and loose
// objects copy keys by assignment, which sets the copy's prototype instead.
// POST /jobs answered 201 and stored the payload without it. It is refused
// now, over HTTP and in the client, naming its path, and nothing is written;
// so is such a key in a signal's or an event's payload (a waitForSignal
// schema would drop it the same way).
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { StoreBlob } from './fixtures/app.js';
import { buildHttp, countJobs, TOKEN, type HttpHarness } from './helpers.js';

let db: TestDatabase;
let h: HttpHarness;
let server: ServerType;
let base: string;

beforeAll(async () => {
  db = await createTestDatabase();
  h = buildHttp(db);
  await new Promise<void>((resolve) => {
    server = serve({ fetch: h.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve());
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await h.client.close();
  await db.drop();
});

function post(body: string): Promise<Response> {
  return fetch(`${base}/jobs`, { method: 'POST', body, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' } });
}

describe('a payload key named __proto__', () => {
  it('is 400 validation_failed naming its path over HTTP, and nothing is written', async () => {
    const one = await post('{"type":"blob.store","payload":{"a":1,"__proto__":{"x":1}}}');
    expect(one.status).toBe(400);
    const e1 = (await one.json()) as { error: { code: string; issues: { path: unknown[] }[] } };
    expect(e1.error.code).toBe('validation_failed');
    expect(e1.error.issues.map((i) => i.path)).toEqual([['payload', '__proto__']]);

    const batch = await post('{"jobs":[{"type":"blob.store","payload":{"a":1}},{"type":"blob.store","payload":{"list":[{"__proto__":null}]}}]}');
    expect(batch.status).toBe(400);
    const e2 = (await batch.json()) as { error: { issues: { path: unknown[] }[] } };
    expect(e2.error.issues.map((i) => i.path)).toEqual([['jobs', 1, 'payload', 'list', 0, '__proto__']]);
    expect(await countJobs(db)).toBe(0);
  });

  it('is a ValidationError in the client, for enqueue and enqueueMany', async () => {
    const payload = JSON.parse('{"deep":{"__proto__":{"admin":true}},"ok":1}') as Record<string, unknown>;
    const err = await h.client.enqueue(StoreBlob, payload).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).issues.map((i) => i.path)).toEqual([['deep', '__proto__']]);
    await expect(h.client.enqueueMany([{ job: StoreBlob, payload: { a: 1 } }, { job: StoreBlob, payload }])).rejects.toBeInstanceOf(ValidationError);
    expect(await countJobs(db)).toBe(0);
  });

  it('answers a payload nested 300,000 levels deep at once: the key search stops at the depth the encoding refuses', async () => {
    const started = Date.now();
    const res = await post(`{"type":"blob.store","payload":{"x":${'['.repeat(300_000)}${']'.repeat(300_000)}}}`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('validation_failed');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await countJobs(db)).toBe(0);
  });

  it('is refused the same way in a signal or an event payload, before anything is looked up or written', async () => {
    const res = await fetch(`${base}/jobs/424242/signals/paid`, {
      method: 'POST',
      body: '{"payload":{"amount":10,"__proto__":{"admin":true}}}',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { issues: { path: unknown[] }[] } }).error.issues.map((i) => i.path)).toEqual([['payload', '__proto__']]);
    const payload = JSON.parse('{"list":[{"__proto__":1}]}') as unknown;
    for (const call of [() => h.client.signalKey('order:42', 'paid', payload), () => h.client.publish('order.paid', payload)]) {
      const err = await call().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).issues.map((i) => i.path)).toEqual([['list', 0, '__proto__']]);
    }
    const written = await db.pool.query<{ n: number }>('select (select count(*) from workhorse.job_signals) + (select count(*) from workhorse.outbox_events) as n');
    expect(Number(written.rows[0]!.n)).toBe(0);
  });

  it('leaves other keys alone: "constructor" and "prototype" are stored as given', async () => {
    const res = await post('{"type":"blob.store","payload":{"constructor":{"y":2},"prototype":3}}');
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    expect((await h.client.getJob(id))!.payload).toEqual({ constructor: { y: 2 }, prototype: 3 });
  });
});

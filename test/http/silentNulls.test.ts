// JSON has no NaN or Infinity, and JSON.stringify writes them (and an invalid
// Date) as null without a word. A payload holding one is refused at the
// boundary, naming its path, instead of being stored as null: over HTTP,
// where a number literal too large for a double (1e400) parses to Infinity,
// and from the client's enqueue, publish and signal. So is an array item
// JSON.stringify writes as null: undefined, a function, a symbol, an empty
// slot, or an item whose toJSON answers undefined; and a payload that is
// undefined at enqueue or publish, and a Map or Set with entries (written
// as {}), and any other non-plain object written as {} (an Error, a
// Promise, a RegExp...). A real null, the text "null" and an
// object key left undefined (an optional field, left out) are still stored
// as given.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { ValidationError } from '../../src/errors.js';
import { defineJob } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { StoreBlob } from './fixtures/app.js';
import { buildHttp, countJobs, TOKEN, type ErrorJson, type HttpHarness } from './helpers.js';
import { startServer, type RunningServer } from './support/server.js';

let db: TestDatabase;
let h: HttpHarness;
let server: RunningServer;
const logged: unknown[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  h = buildHttp(db, { log: (_m, err) => logged.push(err) });
  server = await startServer(h.app);
});

afterEach(async () => {
  expect(logged).toEqual([]);
  expect(await countJobs(db)).toBe(0);
  const events = await db.pool.query<{ n: string }>('select count(*) as n from workhorse.outbox_events');
  expect(Number(events.rows[0]!.n)).toBe(0);
});

afterAll(async () => {
  await server.close();
  await h.client.close();
  await db.drop();
});

async function post(path: string, body: string): Promise<{ status: number; error: ErrorJson['error'] }> {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    body,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
  });
  const text = await res.text();
  return { status: res.status, error: (JSON.parse(text) as ErrorJson).error };
}

describe('over HTTP, a number JSON.parse reads as Infinity', () => {
  it.each([
    ['a payload field', '{"type":"blob.store","payload":{"n":1e400}}', ['payload', 'n']],
    ['a negative one deep in an array', '{"type":"blob.store","payload":{"a":[1,{"b":-1e999}]}}', ['payload', 'a', 1, 'b']],
    ['a batch item', '{"jobs":[{"type":"blob.store","payload":{"ok":1}},{"type":"blob.store","payload":{"n":1e400}}]}', ['jobs', 1, 'payload', 'n']],
  ])('POST /jobs with %s: 400 naming it, nothing written', async (_what, body, path) => {
    const r = await post('/jobs', body);
    expect(r.status).toBe(400);
    expect(r.error.code).toBe('validation_failed');
    expect(r.error.issues!.map((i) => i.path)).toContainEqual(path);
  });

  it('a signal payload: 400 before any job is looked up', async () => {
    for (const path of ['/jobs/1/signals/paid', '/signals/order:1/paid']) {
      const r = await post(path, '{"payload":{"amount":1e400}}');
      expect(r.status).toBe(400);
      expect(r.error.issues!.map((i) => i.path)).toContainEqual(['payload', 'amount']);
    }
  });
});

describe('the client', () => {
  /** Expects a ValidationError with an issue at `path`; returns that issue's message. */
  async function refused(p: Promise<unknown>, path: (string | number)[]): Promise<string> {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ValidationError);
    const issue = (err as ValidationError).issues.find((i) => JSON.stringify(i.path) === JSON.stringify(path));
    expect(issue, JSON.stringify((err as ValidationError).issues)).toBeDefined();
    return issue!.message;
  }

  it('refuses NaN, Infinity and an invalid Date in a payload, naming their paths', async () => {
    await refused(h.client.enqueue(StoreBlob, { n: NaN }), ['n']);
    await refused(h.client.enqueue(StoreBlob, { a: [1, Infinity] }), ['a', 1]);
    await refused(h.client.enqueue(StoreBlob, { when: new Date(Number.NaN) }), ['when']);
    await refused(h.client.enqueueMany([{ job: StoreBlob, payload: { ok: 1 } }, { job: StoreBlob, payload: { n: -Infinity } }]), [1, 'n']);
    await refused(h.client.publish('order.paid', { total: NaN }), ['total']);
    await refused(h.client.signal('1', 'paid', { amount: Infinity }), ['amount']);
  });

  it('refuses an array item JSON would store as null, naming its path', async () => {
    await refused(h.client.publish('order.paid', { lines: [1, , 3] }), ['lines', 1]);
    await refused(h.client.publish('order.paid', [() => 1]), [0]);
    await refused(h.client.publish('order.paid', { tags: ['a', Symbol('b')] }), ['tags', 1]);
    await refused(h.client.enqueue(StoreBlob, { a: [undefined] }), ['a', 0]);
    await refused(h.client.signal('1', 'paid', { list: [[1, undefined]] }), ['list', 0, 1]);
    await refused(h.client.enqueue(StoreBlob, { a: [{ toJSON: () => undefined }] }), ['a', 0]);
  });

  it('refuses a payload that is undefined (stored as null) at enqueue and publish, as HTTP refuses a missing one', async () => {
    const AnyPayload = defineJob({ type: 'any.payload', schema: z.any() });
    await refused(h.client.enqueue(AnyPayload, undefined), []);
    await refused(h.client.enqueueMany([{ job: AnyPayload, payload: 1 }, { job: AnyPayload, payload: undefined }]), [1]);
    await refused(h.client.publish('order.paid', undefined), []);
    // An event has no schema: the refusal does not send its author looking for one.
    await expect(h.client.publish('order.paid', undefined)).rejects.toThrow(/is undefined, which would be stored as null: pass null or a value$/);
    // A schema whose default fills it in still takes none; a real null is stored as null.
    const Defaulted = defineJob({ type: 'defaulted.payload', schema: z.object({ n: z.number() }).default({ n: 7 }) });
    const a = await h.client.enqueue(Defaulted, undefined);
    const b = await h.client.enqueue(AnyPayload, null);
    expect((await h.client.getJob(a.id))!.payload).toEqual({ n: 7 });
    expect((await h.client.getJob(b.id))!.payload).toBeNull();
    await db.pool.query('truncate workhorse.jobs cascade');
  });

  it('refuses a Map or a Set that holds entries (JSON writes it as {}), naming its path; an empty one is stored as {}', async () => {
    const AnyPayload = defineJob({ type: 'map.payload', schema: z.any() });
    await refused(h.client.enqueue(AnyPayload, new Map([['a', 1]])), []);
    await refused(h.client.enqueue(AnyPayload, { tags: new Set(['x']) }), ['tags']);
    await refused(h.client.publish('order.paid', { lines: [{ byId: new Map([[1, 'a']]) }] }), ['lines', 0, 'byId']);
    const { id } = await h.client.enqueue(AnyPayload, { seen: new Set(), n: {} });
    expect((await h.client.getJob(id))!.payload).toEqual({ seen: {}, n: {} });
    await db.pool.query('truncate workhorse.jobs cascade');
  });

  it('refuses any other object JSON writes as {} (an Error, a RegExp, a Promise, Headers, a class keeping its data private), naming it; plain, typed and toJSON objects are stored', async () => {
    const AnyPayload = defineJob({ type: 'odd.payload', schema: z.any() });
    class Secretive {
      #token = 'x';
      get token(): string {
        return this.#token;
      }
    }
    const pending = Promise.resolve(1);
    expect(await refused(h.client.enqueue(AnyPayload, { err: new Error('lost') }), ['err'])).toMatch(/an Error is written as \{\}/);
    expect(await refused(h.client.enqueue(AnyPayload, pending), [])).toMatch(/a Promise is written as \{\} .*a missing await\?/);
    expect(await refused(h.client.publish('order.paid', /abc/), [])).toMatch(/a RegExp is written as \{\}/);
    expect(await refused(h.client.publish('order.paid', { h: [new Headers({ a: '1' })] }), ['h', 0])).toMatch(/a Headers/);
    expect(await refused(h.client.signal('1', 'paid', { s: new Secretive() }), ['s'])).toMatch(/a Secretive is written as \{\}/);
    await refused(h.client.enqueue(AnyPayload, { w: new WeakMap(), b: new ArrayBuffer(4) }), ['w']);
    const { id } = await h.client.enqueue(AnyPayload, {
      plain: {},
      bare: Object.create(null) as object,
      bytes: new Uint8Array([1, 2]),
      none: new Uint8Array(0),
      at: new URL('https://example.com/a'),
      buf: Buffer.from('hi'),
    });
    expect((await h.client.getJob(id))!.payload).toEqual({
      plain: {},
      bare: {},
      bytes: { 0: 1, 1: 2 },
      none: {},
      at: 'https://example.com/a',
      buf: { type: 'Buffer', data: [104, 105] },
    });
    await db.pool.query('truncate workhorse.jobs cascade');
  });

  it('stores an object key left undefined as absent, as an optional field', async () => {
    const { id } = await h.client.enqueue(StoreBlob, { n: 1, note: undefined });
    expect((await h.client.getJob(id))!.payload).toEqual({ n: 1 });
    await db.pool.query('truncate workhorse.jobs cascade');
  });

  it('stores a real null, the text "null" and a valid Date as given', async () => {
    const when = new Date('2030-01-02T03:04:05.000Z');
    const { id } = await h.client.enqueue(StoreBlob, { n: null, s: 'null', when, big: 1e308 });
    expect((await h.client.getJob(id))!.payload).toEqual({ n: null, s: 'null', when: when.toISOString(), big: 1e308 });
    await db.pool.query('truncate workhorse.jobs cascade');
  });
});

// Input that passes a schema but that PostgreSQL would refuse (a NUL or a
// lone surrogate in a stored string, a date outside timestamptz, an id over
// bigint, runaway nesting) is refused at the boundary: 400
// validation_failed naming the field over HTTP, ValidationError from the
// client, nothing written and nothing logged as an internal failure. So are
// a backoff with unknown keys or a base over its cap. A data exception that
// still reaches PostgreSQL is mapped to 400 in one place.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../../src/client/defineJob.js';
import { ConfigError, ValidationError } from '../../src/errors.js';
import { MAX_JSON_DEPTH } from '../../src/storable.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { SendEmail, StoreBlob } from './fixtures/app.js';
import { buildHttp, countJobs, withToken, type ErrorJson, type HttpHarness } from './helpers.js';

let db: TestDatabase;
let h: HttpHarness;
const logged: unknown[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  h = buildHttp(db, { log: (_m, err) => logged.push(err) });
});

afterEach(async () => {
  expect(logged).toEqual([]);
  expect(await countJobs(db)).toBe(0);
});

afterAll(async () => {
  await h.client.close();
  await db.drop();
});

async function refusal(res: Response): Promise<ErrorJson['error']> {
  const text = await res.text();
  expect(res.status, text).toBe(400);
  const { error } = JSON.parse(text) as ErrorJson;
  expect(error.code).toBe('validation_failed');
  return error;
}

const email = { type: 'email.send', payload: { to: 'ada@example.com', subject: 'hi' } };
const NUL = '\u0000';
const LONE_HIGH = '\ud800';
const LONE_LOW = '\udc00';

function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

/** A POST /jobs body that validates against every schema but cannot be stored, and the path the 400 must name. */
const badEnqueues: [string, unknown, (string | number)[]][] = [
  ['a NUL in a payload field', { ...email, payload: { ...email.payload, subject: `a${NUL}b` } }, ['payload', 'subject']],
  ['a lone high surrogate in a payload field', { ...email, payload: { ...email.payload, subject: `x${LONE_HIGH}` } }, ['payload', 'subject']],
  ['a lone low surrogate in a payload field', { ...email, payload: { ...email.payload, subject: `${LONE_LOW}x` } }, ['payload', 'subject']],
  ['a NUL deep in a payload', { type: 'blob.store', payload: { a: { b: [1, { c: `x${NUL}` }] } } }, ['payload', 'a', 'b', 1, 'c']],
  ['a NUL in a payload key', { type: 'blob.store', payload: { a: { [`k${NUL}`]: 1 } } }, ['payload', 'a', `k${NUL}`]],
  ['a lone surrogate in a payload key', { type: 'blob.store', payload: { [LONE_HIGH]: true } }, ['payload', LONE_HIGH]],
  [`a payload nested deeper than ${MAX_JSON_DEPTH} levels`, { type: 'blob.store', payload: { deep: nested(MAX_JSON_DEPTH + 5) } }, ['payload']],
  ['a NUL in dedupeKey', { ...email, dedupeKey: `k${NUL}` }, ['dedupeKey']],
  ['a lone surrogate in dedupeKey', { ...email, dedupeKey: `k${LONE_HIGH}` }, ['dedupeKey']],
  ['a NUL in concurrencyKey', { ...email, concurrencyKey: `${NUL}` }, ['concurrencyKey']],
  ['a lone surrogate in concurrencyKey', { ...email, concurrencyKey: LONE_LOW }, ['concurrencyKey']],
  ['runAt in year 0000', { ...email, runAt: '0000-01-01T00:00:00Z' }, ['runAt']],
  ['runAt in year 0000 by its offset', { ...email, runAt: '0001-01-01T00:30:00+01:00' }, ['runAt']],
  ['a NUL in a queue name', { ...email, queue: `q${NUL}` }, ['queue']],
  ['a bad item in a batch', { jobs: [email, { ...email, payload: { ...email.payload, subject: NUL } }] }, ['jobs', 1, 'payload', 'subject']],
  ['a backoff with an unknown key', { ...email, backoff: { kind: 'fixed', baseMs: 10, jitter: true } }, ['backoff']],
  ['a backoff whose base exceeds its cap', { ...email, backoff: { kind: 'exponential', baseMs: 5000, maxMs: 1000 } }, ['backoff', 'baseMs']],
];

describe('POST /jobs refuses what PostgreSQL cannot store', () => {
  it.each(badEnqueues)('%s: 400 naming the field', async (_what, body, path) => {
    const e = await refusal(await withToken(h.app, 'POST', '/jobs', body));
    expect(e.issues!.map((i) => i.path)).toContainEqual(path);
  });

  it('names the string its message describes: with a lone surrogate in one key and a NUL in a later one, the first of them', async () => {
    const e = await refusal(await withToken(h.app, 'POST', '/jobs', { type: 'blob.store', payload: { [LONE_LOW]: 1, [`b${NUL}`]: 2 } }));
    expect(e.issues).toEqual([{ path: ['payload', LONE_LOW], message: expect.stringContaining('lone UTF-16 surrogate') }]);
    const v = await refusal(await withToken(h.app, 'POST', '/jobs', { type: 'blob.store', payload: { a: `x${NUL}`, [LONE_HIGH]: { b: 1 } } }));
    expect(v.issues).toEqual([{ path: ['payload', 'a'], message: expect.stringContaining('NUL') }]);
  });

  it('still accepts the edges of what can be stored: an emoji, runAt in years 0001 and 9999, depth at the limit', async () => {
    const ok = [
      { ...email, payload: { ...email.payload, subject: 'ok 😀 \u2028' }, dedupeKey: 'k😀' },
      { ...email, runAt: '0001-01-01T00:00:00Z', dedupeKey: 'y1' },
      { ...email, runAt: '9999-12-31T23:59:59Z', dedupeKey: 'y9999' },
      { type: 'blob.store', payload: { deep: nested(MAX_JSON_DEPTH - 2), text: 'a\\u0000 is only text here' } },
    ];
    for (const body of ok) expect((await withToken(h.app, 'POST', '/jobs', body)).status, JSON.stringify(body).slice(0, 80)).toBe(201);
    await db.pool.query('truncate workhorse.jobs cascade');
  });
});

describe('ids, cursors and path parameters', () => {
  const over = '9223372036854775808';
  it.each([
    ['GET', `/jobs/${over}`, ['id']],
    ['POST', `/jobs/${over}/cancel`, ['id']],
    ['POST', `/jobs/9999999999999999999/retry`, ['id']],
    ['GET', `/jobs?cursor=${over}`, ['cursor']],
    ['GET', '/jobs?cursor=9999999999999999999', ['cursor']],
    ['GET', '/jobs?queue=%00', ['queue']],
    ['POST', '/workers/%00/pause', ['id']],
    ['POST', '/workers/a%00b/resume', ['id']],
    ['POST', '/queues/%00/pause', ['name']],
  ] as const)('%s %s: 400 naming %j', async (method, path, field) => {
    const e = await refusal(await withToken(h.app, method, path));
    expect(e.issues!.map((i) => i.path)).toContainEqual(field);
  });

  it('accepts the largest bigint id (and answers 404 for it)', async () => {
    const res = await withToken(h.app, 'GET', '/jobs/9223372036854775807');
    expect(res.status).toBe(404);
    expect((await withToken(h.app, 'GET', '/jobs?cursor=9223372036854775807')).status).toBe(200);
  });
});

describe('the client refuses the same input with ValidationError', () => {
  async function rejected(p: Promise<unknown>): Promise<ValidationError> {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ValidationError);
    return err as ValidationError;
  }
  const ok = { to: 'ada@example.com', subject: 'hi' };

  it('refuses NUL and lone surrogates in payloads (values and keys, at any depth) and keys', async () => {
    expect((await rejected(h.client.enqueue(SendEmail, { ...ok, subject: `a${NUL}` }))).issues[0]!.path).toEqual(['subject']);
    expect((await rejected(h.client.enqueue(StoreBlob, { a: [{ b: LONE_LOW }] }))).issues[0]!.path).toEqual(['a', 0, 'b']);
    expect((await rejected(h.client.enqueue(StoreBlob, { [`${NUL}`]: 1 }))).issues[0]!.path).toEqual([NUL]);
    expect((await rejected(h.client.enqueue(SendEmail, ok, { dedupeKey: `a${NUL}` }))).issues[0]!.path).toEqual(['dedupeKey']);
    expect((await rejected(h.client.enqueue(SendEmail, ok, { concurrencyKey: LONE_HIGH }))).issues[0]!.path).toEqual(['concurrencyKey']);
  });

  it('refuses payloads JSON cannot encode or jsonb cannot nest', async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect((await rejected(h.client.enqueue(StoreBlob, cyclic))).message).toMatch(/not JSON-serialisable/);
    expect((await rejected(h.client.enqueue(StoreBlob, { n: 10n }))).message).toMatch(/not JSON-serialisable/);
    expect((await rejected(h.client.enqueue(StoreBlob, { deep: nested(MAX_JSON_DEPTH + 1) }))).message).toMatch(/nest deeper/);
    expect((await rejected(h.client.enqueue(StoreBlob, { deep: nested(50_000) }))).message).toMatch(/nests too deeply|nest deeper/);
  });

  it('refuses runAt outside timestamptz and invalid dates', async () => {
    for (const runAt of [new Date('0000-06-01T00:00:00Z'), new Date(Date.UTC(10000, 0, 1)), new Date(-8.64e15), new Date('not a date')]) {
      const err = await rejected(h.client.enqueue(SendEmail, ok, { runAt }));
      expect(err.issues[0]!.path, String(runAt)).toEqual(['runAt']);
    }
  });

  it('says what a date that is not a Date is, and what to pass instead', async () => {
    const cases: [unknown, string][] = [
      [Date.now() + 60_000, 'must be a Date, not a number (pass new Date(ms))'],
      ['2030-01-01T00:00:00Z', 'must be a Date, not a string (pass new Date(text))'],
      [new Date('not a date'), 'must be a valid date, not an Invalid Date'],
      [{}, 'must be a Date'],
    ];
    for (const [runAt, message] of cases) {
      const err = await rejected(h.client.enqueue(SendEmail, ok, { runAt: runAt as Date }));
      expect(err.issues, String(runAt)).toEqual([{ path: ['runAt'], message }]);
    }
  });

  it('refuses ids over bigint, unsafe numeric ids, and cursors over bigint', async () => {
    await rejected(h.client.getJob('9223372036854775808'));
    await rejected(h.client.cancel('10000000000000000000'));
    await rejected(h.client.retry(2 ** 60));
    await rejected(h.client.admin.listJobs({ cursor: '9223372036854775808' }));
    expect(await h.client.getJob('9223372036854775807')).toBeNull();
  });

  it('refuses a NUL or lone surrogate in a worker id', async () => {
    await rejected(h.client.admin.setWorkerPaused(`w${NUL}`, true));
    await rejected(h.client.admin.setWorkerPaused(LONE_HIGH, false));
  });

  it('refuses a backoff with unknown keys or a base over its cap, at enqueue and in defineJob', async () => {
    const unknownKey = await rejected(h.client.enqueue(SendEmail, ok, { backoff: { kind: 'fixed', jitter: 1 } as never }));
    expect(unknownKey.message).toMatch(/jitter/);
    const inverted = await rejected(h.client.enqueue(SendEmail, ok, { backoff: { baseMs: 10_000, maxMs: 1000 } }));
    expect(inverted.issues).toContainEqual({ path: ['backoff', 'baseMs'], message: 'baseMs (10000) must not exceed maxMs (1000)' });
    expect(() => defineJob({ type: 'x.y', schema: z.object({}), retry: { backoff: { baseMs: 5_000_000 } } })).toThrow(ConfigError);
    // The cap the user never wrote is named with its value.
    expect(() => defineJob({ type: 'x.y', schema: z.object({}), retry: { backoff: { baseMs: 5_000_000 } } })).toThrow(
      'retry.backoff.baseMs: baseMs (5000000) must not exceed maxMs (3600000, its default)',
    );
    expect(() => defineJob({ type: 'x.y', schema: z.object({}), retry: { backoff: { kind: 'fixed', jitter: true } as never } })).toThrow(/jitter/);
  });
});

describe('a data exception that reaches PostgreSQL', () => {
  it('is a 400 validation_failed, not a 500, and is not logged as internal', async () => {
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    const h2 = buildHttp(db, {
      listSchedules: async () => (await pool.query('select $1::int as n', ['not-a-number'])).rows,
      log: (_m, err) => logged.push(err),
    });
    try {
      const e = await refusal(await withToken(h2.app, 'GET', '/schedules'));
      expect(e.message).toMatch(/the database refused a value: invalid input syntax for type integer/);
      expect(e.issues).toEqual([{ path: [], message: expect.stringMatching(/invalid input syntax/) }]);
    } finally {
      await h2.client.close();
      await pool.end();
    }
  });
});

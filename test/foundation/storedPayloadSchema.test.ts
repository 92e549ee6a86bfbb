// A payload is stored as JSON and parsed by its schema again when the job
// runs. A schema that refuses its own JSON (z.date()) or parses it into
// something else (a transform that is not idempotent) must be refused at
// enqueue with a ValidationError naming the field, writing nothing, rather
// than accepted and then failed, without a retry, at the job's first run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { ConfigError, ValidationError } from '../../src/errors.js';
import { defineSchedule } from '../../src/schedules/defineSchedule.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { countJobs } from './support/rows.js';

const AtDate = defineJob({ type: 'sp.date', schema: z.object({ at: z.date() }) });
const Length = defineJob({ type: 'sp.length', schema: z.object({ s: z.string().transform((s) => s.length) }) });
const Preparsed = defineJob({
  type: 'sp.preparsed',
  schema: z.preprocess((v) => JSON.parse(v as string), z.object({ n: z.number() })),
});
const PlusOne = defineJob({ type: 'sp.plus', schema: z.object({ n: z.number().transform((n) => n + 1) }) });
const Fine = defineJob({
  type: 'sp.fine',
  schema: z.object({ at: z.coerce.date(), name: z.string().trim(), tag: z.string().default('none') }),
});

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, namespace: 'stored-payload', jobs: [AtDate, Length, PlusOne, Preparsed, Fine] });
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

async function refusal(p: Promise<unknown>): Promise<ValidationError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ValidationError);
  return err as ValidationError;
}

describe('enqueue refuses a payload its schema cannot read back from its JSON', () => {
  it('z.date(): a Date is stored as an ISO string, which z.date() refuses', async () => {
    const err = await refusal(client.enqueue(AtDate, { at: new Date() }));
    expect(err.issues[0]!.path).toEqual(['at']);
    expect(err.message).toMatch(/z\.coerce\.date\(\)/);
    expect(await countJobs(db.pool, 'namespace = $1', ['stored-payload'])).toBe(0);
  });

  it('a transform whose output the schema does not take', async () => {
    const err = await refusal(client.enqueue(Length, { s: 'hello' }));
    expect(err.issues[0]!.path).toEqual(['s']);
  });

  it('a transform that is not idempotent: the worker would see n + 2', async () => {
    await refusal(client.enqueue(PlusOne, { n: 1 }));
  });

  it('a preprocess that throws on its own output is a ValidationError too, not its raw error', async () => {
    const err = await refusal(client.enqueue(Preparsed, '{"n":1}' as never));
    expect(err.message).toMatch(/the schema threw/);
  });

  it('one such item rejects the whole enqueueMany, its index first in the issue path', async () => {
    const err = await refusal(
      client.enqueueMany([
        { job: Fine, payload: { at: new Date(), name: 'a' } },
        { job: AtDate, payload: { at: new Date() } },
      ]),
    );
    expect(err.issues[0]!.path).toEqual([1, 'at']);
    expect(await countJobs(db.pool, 'namespace = $1', ['stored-payload'])).toBe(0);
  });

  it('a schedule with such a payload is a ConfigError when it is defined', () => {
    expect(() => defineSchedule({ name: 'sp.nightly', job: AtDate, payload: { at: new Date() }, everyMs: 60_000 })).toThrow(ConfigError);
  });
});

it('a schema that reads its JSON back unchanged is accepted, and the handler gets the enqueued values', async () => {
  const at = new Date('2030-01-02T03:04:05.678Z');
  const { id } = await client.enqueue(Fine, { at, name: '  ada ' });
  const seen: unknown[] = [];
  const worker = new Worker(client, { listen: false });
  worker.handle(Fine, async (p) => {
    seen.push(p);
    return { at: p.at.toISOString(), name: p.name, tag: p.tag };
  });
  expect(await worker.runOnce()).toBe(true);
  await worker.stop();
  expect(seen).toEqual([{ at, name: 'ada', tag: 'none' }]);
  expect((await client.getJob(id))?.status).toBe('succeeded');
});

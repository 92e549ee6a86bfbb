// The package's other exports, called from plain JavaScript with what a
// type checker would have refused: the standalone migrate(), appWorker(),
// createTickHandler()'s options, defineJob()'s type and readSchemaVersion().
// Each answers with a typed error before anything connects; they answered
// with a TypeError from deep inside pg or the worker, a raw error of the
// caller's own getter, or (migrate({})) a connection attempt with pg's
// environment defaults.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { appWorker, ConfigError, createTickHandler, defineApp, defineJob, migrate, readSchemaVersion, ValidationError } from '../../src/index.js';
import pg from 'pg';
import { createEmptyDatabase } from '../helpers/db.js';

const refusal = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e);
const thrown = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return undefined;
};

let db: Awaited<ReturnType<typeof createEmptyDatabase>>;
let pool: pg.Pool;
beforeAll(async () => {
  db = await createEmptyDatabase();
  pool = new pg.Pool({ connectionString: db.url, max: 1 });
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

const Job = defineJob({ type: 'bad.export', schema: z.object({}) });
const app = defineApp({ jobs: [Job], configure: () => undefined });

describe('the standalone migrate()', () => {
  it.each([
    ['undefined', undefined, /expected an object/],
    ['null', null, /expected an object/],
    ['{}', {}, /either pool or connectionString/],
    ['an empty connection string', { connectionString: '' }, /connectionString: must not be empty/],
    ['a number as connection string', { connectionString: 42 }, /connectionString/],
    ['a number as pool', { pool: 42 }, /pool: must be a pg Pool/],
    ['an unknown key', { connectionString: 'postgres://127.0.0.1:1/none', bogus: 1 }, /bogus/],
    ['a directory that is not sql/', { connectionString: 'postgres://127.0.0.1:1/none', sqlDir: tmpdir() }, /sqlDir: is not workhorse's sql\/ directory/],
  ])('refuses %s with a ConfigError before connecting', async (_what, options, message) => {
    const err = await refusal(migrate(options as never));
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(message);
  });

  it('leaves the database untouched when it refuses (an unknown key next to a real connection string)', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'wh-sql-none-'));
    try {
      expect(await refusal(migrate({ connectionString: db.url, bogus: 1 } as never))).toBeInstanceOf(ConfigError);
      expect(await refusal(migrate({ connectionString: db.url, sqlDir: empty }))).toBeInstanceOf(ConfigError);
      expect(await readSchemaVersion(pool)).toBeNull();
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('appWorker and createTickHandler', () => {
  it.each([
    ['null', null],
    ['a number', 42],
    ['a string', 'x'],
    ['an object that is not an app', {}],
    ['a proxy that throws when read', new Proxy({}, { get: () => { throw new Error('p'); } })],
  ])('appWorker refuses %s as the app with a ConfigError', (_what, value) => {
    const err = thrown(() => appWorker(value as never));
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/^appWorker: /);
  });

  it('refuses options that are not an object', () => {
    expect(thrown(() => appWorker(app, 42 as never))).toBeInstanceOf(ConfigError);
    expect(thrown(() => appWorker(app, null as never))).toBeInstanceOf(ConfigError);
    expect(thrown(() => createTickHandler(app, 42 as never))).toBeInstanceOf(ConfigError);
    expect(appWorker(app, { concurrency: 3 }).options).toMatchObject({ concurrency: 3 });
  });
});

describe("defineJob's type", () => {
  it.each([
    ['a symbol', { type: Symbol('x'), schema: z.any() }],
    ['an object whose toString throws', { type: { toString: () => { throw new Error('boom'); } }, schema: z.any() }],
    ['a proxy that throws when read', new Proxy({}, { get: () => { throw new Error('p'); } })],
  ])('%s is a ConfigError', (_what, input) => {
    expect(thrown(() => defineJob(input as never))).toBeInstanceOf(ConfigError);
  });
});

describe('readSchemaVersion', () => {
  it.each([null, undefined, 42, 'postgres://x', {}])('refuses %s with a ValidationError', async (value) => {
    const err = await refusal(readSchemaVersion(value as never));
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as Error).message).toContain('anything with query()');
  });
});

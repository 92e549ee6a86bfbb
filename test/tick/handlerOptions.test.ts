// createTickHandler(app, options): options win over the environment. A
// `pool` given in code (the IAM-auth path, where DATABASE_URL may still be
// set, as the CDK construct sets it) used to clash with DATABASE_URL and
// fail every invocation with "give connectionString or pool, not both";
// now the pool replaces it. A connectionString given in code wins too.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTickHandler } from '../../src/index.js';
import app from '../fixtures/tick-app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { lambdaContext } from './support.js';

/** A URL nobody answers: a tick that used it would fail to connect. */
const UNREACHABLE = 'postgres://nobody@127.0.0.1:1/none';

let db: TestDatabase;
const saved = process.env.DATABASE_URL;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterEach(() => {
  if (saved === undefined) delete process.env.DATABASE_URL;
  else process.env.DATABASE_URL = saved;
});

afterAll(async () => {
  await db?.drop();
});

describe('createTickHandler options over DATABASE_URL', () => {
  it('takes a pool given in code while DATABASE_URL is set', async () => {
    process.env.DATABASE_URL = UNREACHABLE;
    const pool = new pg.Pool({ connectionString: db.url, max: 2 });
    try {
      const summary = await createTickHandler(app, { pool })({}, lambdaContext(5_000));
      expect(summary).toMatchObject({ failed: 0 });
    } finally {
      await pool.end();
    }
  });

  it('takes a connectionString given in code over DATABASE_URL', async () => {
    process.env.DATABASE_URL = UNREACHABLE;
    const summary = await createTickHandler(app, { connectionString: db.url })({}, lambdaContext(5_000));
    expect(summary).toMatchObject({ failed: 0 });
  });
});

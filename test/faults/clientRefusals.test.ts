// A client call PostgreSQL cancels (57014: a statement_timeout on the role)
// or refuses for a privilege the login lacks (42501: grants revoked) fails
// with DatabaseUnavailableError, pg's error as its cause and what to do in
// its message. It threw pg's raw DatabaseError, which is not a
// WorkhorseError and has no `retryable`: a handler calling client.enqueue
// failed its job for good, and an app catching the typed fault missed it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, DatabaseUnavailableError, defineJob } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { asServerAdmin, createRuntimeLogin, type RuntimeLogin } from '../helpers/runtimeLogin.js';

const Job = defineJob({ type: 'refusal.job', schema: z.object({}) });
let db: TestDatabase;
let login: RuntimeLogin;

beforeAll(async () => {
  db = await createTestDatabase();
  login = await createRuntimeLogin(db.url, { prefix: 'wh_clientrefusal' });
});
afterAll(async () => {
  await asServerAdmin(`alter role ${login.name} reset statement_timeout`).catch(() => undefined);
  await asServerAdmin(`grant workhorse_runtime to ${login.name}`).catch(() => undefined);
  await db?.drop();
  await login?.drop();
});

const failure = (p: Promise<unknown>) => p.then(() => 'no error', (e: unknown) => e);

it('a statement the role’s statement_timeout cancels: DatabaseUnavailableError, retryable, saying so', async () => {
  await asServerAdmin(`alter role ${login.name} set statement_timeout = '200ms'`);
  // A fresh client (the role's setting is read when a session starts), whose enqueue waits for a lock held
  // meanwhile, so the timeout is certain to cancel it.
  const client = createClient({ connectionString: login.url, jobs: [Job], poolMax: 1 });
  const holder = await db.pool.connect();
  try {
    await holder.query('begin');
    await holder.query('lock table workhorse.jobs in access exclusive mode');
    const err = await failure(client.enqueue(Job, {}));
    await holder.query('rollback');
    expect(err).toBeInstanceOf(DatabaseUnavailableError);
    expect(err).toMatchObject({ code: 'database_unavailable', retryable: true });
    expect((err as Error).message).toMatch(/^the database cancelled the statement \(a statement_timeout set on the role or the database, or pg_cancel_backend\); it took no effect/);
    expect(((err as Error).cause as { code?: string }).code).toBe('57014');
    // Nothing was written; the next call goes through.
    expect((await db.pool.query<{ n: number }>('select count(*)::int n from workhorse.jobs')).rows[0]!.n).toBe(0);
    expect((await client.enqueue(Job, {})).id).toBeTruthy();
  } finally {
    holder.release();
    await client.close();
    await asServerAdmin(`alter role ${login.name} reset statement_timeout`);
  }
});

it('grants revoked: DatabaseUnavailableError naming the privilege and what to do', async () => {
  const client = createClient({ connectionString: login.url, jobs: [Job], poolMax: 1 });
  try {
    await client.enqueue(Job, {});
    await asServerAdmin(`revoke workhorse_runtime from ${login.name}`);
    for (const call of [() => client.enqueue(Job, {}), () => client.getJob('1')]) {
      const err = await failure(call());
      expect(err).toBeInstanceOf(DatabaseUnavailableError);
      expect((err as Error).message).toMatch(/^the database refused the call: permission denied .*\(42501\); the database login lacks a privilege: make it a member of workhorse_runtime/);
      expect(((err as Error).cause as { code?: string }).code).toBe('42501');
    }
    await asServerAdmin(`grant workhorse_runtime to ${login.name}`);
    expect((await client.enqueue(Job, {})).id).toBeTruthy();
  } finally {
    await client.close();
  }
});

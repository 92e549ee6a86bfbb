// A protocol function dropped from a migrated database (by hand, or a
// restore that left it out) is put back by `workhorse migrate`, although the
// protocol files and their checksum are unchanged: it used to say "schema is
// up to date" and leave every call of the function failing with 42883.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { cliEnv, runCli } from '../cli/support/runCli.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.drop();
});

const present = async (name: string) =>
  (await db.pool.query<{ n: number }>("select count(*)::int n from pg_proc where pronamespace = 'workhorse'::regnamespace and proname = $1", [name])).rows[0]!.n;

describe('migrate with an unchanged protocol', () => {
  it('finds nothing to do while every protocol function is there', async () => {
    const r = await migrate({ connectionString: db.url });
    expect(r).toMatchObject({ applied: [], reinstalled: [] });
  });

  it('reinstalls a protocol function that was dropped, and says so', async () => {
    await db.pool.query('drop function workhorse.complete_many_v1(text, bigint[], bigint[], jsonb[])');
    expect(await present('complete_many_v1')).toBe(0);
    const r = await migrate({ connectionString: db.url });
    expect(r.reinstalled).toEqual(['complete_many_v1']);
    expect(await present('complete_many_v1')).toBe(1);
    expect((await migrate({ connectionString: db.url })).reinstalled).toEqual([]);
  });

  it('`workhorse tick` against a database missing a function says so and how to fix it, not that the schema is ahead', async () => {
    const args = await db.pool.query<{ a: string }>(
      "select pg_get_function_identity_arguments(oid) as a from pg_proc where pronamespace = 'workhorse'::regnamespace and proname = 'claim_slots_v2'",
    );
    await db.pool.query(`drop function workhorse.claim_slots_v2(${args.rows[0]!.a})`);
    const r = await runCli(['tick', 'test/fixtures/tick-app.ts', '--budget-ms', '5000'], cliEnv({ DATABASE_URL: db.url }), undefined, 60_000);
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(/ahead of this code/);
    // The tick fails with a DatabaseUnavailableError (the next tick tries again) carrying the refusal and what to do, once.
    expect(r.stderr).toMatch(
      /^workhorse tick: the database refused the tick's work: function workhorse\.claim_slots_v2\(.*\) does not exist \(42883\); a workhorse function is missing: run `workhorse migrate` to reinstall it\n$/,
    );
    expect((await migrate({ connectionString: db.url })).reinstalled).toEqual(['claim_slots_v2']);
  });

  it('`workhorse migrate` names what it reinstalled instead of "schema is up to date"', async () => {
    await db.pool.query('drop function workhorse.heartbeat_many_v1');
    const r = await runCli(['migrate'], cliEnv({ DATABASE_URL: db.url }));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^reinstalled missing protocol functions: heartbeat_many_v1\nschema version \d+\n$/);
    expect(await present('heartbeat_many_v1')).toBe(1);
    const again = await runCli(['migrate'], cliEnv({ DATABASE_URL: db.url }));
    expect(again.stdout).toMatch(/^schema is up to date \(version \d+\)\n$/);
  });
});

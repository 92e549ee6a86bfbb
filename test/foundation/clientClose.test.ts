// client.close() is bounded: pg-pool's end() waits for every connection
// lent out to come back, so a call stuck on a hung server (a worker's claim
// in flight when it stopped, up to a protocol call's timeout of a minute or
// a lease) held close() as long, and `workhorse worker` exited long after
// its drain deadline. Past CLOSE_BOUND_MS / 2 the sockets still open are
// destroyed; the stuck call fails at once. Here the stuck call is a slow
// statement, which holds its connection the same way.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLOSE_BOUND_MS, createClient } from '../../src/client/client.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.drop();
});

describe('client.close() with a call still running', () => {
  it('ends within its bound, failing the call, and leaves no backend behind', async () => {
    const client = createClient({ connectionString: db.url });
    await client.ready();
    const slow = client.pool.query("select pg_sleep(60), 'slow' as tag").then(
      () => 'finished',
      () => 'failed',
    );
    // Until the statement runs in its backend.
    for (let i = 0; i < 50; i++) {
      const r = await db.pool.query("select count(*)::int as n from pg_stat_activity where query like '%pg_sleep(60)%' and state = 'active' and pid <> pg_backend_pid()");
      if (r.rows[0]!.n > 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const start = Date.now();
    await client.close();
    const took = Date.now() - start;
    expect(took).toBeLessThan(CLOSE_BOUND_MS);
    expect(took).toBeGreaterThanOrEqual(CLOSE_BOUND_MS / 2 - 100);
    expect(await slow).toBe('failed');
    // The backend notices its client is gone (client_connection_check_interval) and ends.
    for (let i = 0; i < 50; i++) {
      const r = await db.pool.query("select count(*)::int as n from pg_stat_activity where query like '%pg_sleep(60)%' and pid <> pg_backend_pid()");
      if (r.rows[0]!.n === 0) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the slow statement still runs in its backend');
  }, 30_000);

  it('with nothing lent out, ends at once', async () => {
    const client = createClient({ connectionString: db.url });
    await client.ready();
    const start = Date.now();
    await client.close();
    expect(Date.now() - start).toBeLessThan(1_000);
  });
});

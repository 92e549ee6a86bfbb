// A client call whose pooled connection was reset while it sat idle (the
// server restarted, a load balancer dropped it) fails with a retryable
// DatabaseUnavailableError, as a connection that cannot be made does; it
// was the bare `write ECONNRESET` (or pg's "Connection terminated
// unexpectedly"), untyped. The broken connection is not lent out again: the
// next call succeeds on a new one. Through a TCP proxy in front of the test
// server, which drops every connection it carries.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { TcpProxy } from '../../certify/tcpProxy.js';
import { createClient, DatabaseUnavailableError, defineJob, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const Email = defineJob({ type: 'reset.email', schema: z.object({ to: z.string() }) });

let db: TestDatabase;
let proxy: TcpProxy;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  const url = new URL(db.url);
  proxy = new TcpProxy(url.hostname, Number(url.port || 5432));
  url.port = String(await proxy.start());
  client = createClient({ connectionString: url.toString(), jobs: [Email], poolMax: 1 });
});

afterAll(async () => {
  await client?.close();
  await proxy?.close();
  await db?.drop();
});

describe('a client call on a pooled connection reset while idle', () => {
  it.each([
    ['getJob', (c: Client, id: string) => c.getJob(id)],
    ['cancel', (c: Client, id: string) => c.cancel(id)],
    ['publish', (c: Client) => c.publish('reset.topic', { n: 1 })],
    ['enqueue', (c: Client) => c.enqueue(Email, { to: 'a@example.com' })],
  ] as const)('%s fails with a retryable DatabaseUnavailableError; the next call succeeds', async (_what, call) => {
    const { id } = await client.enqueue(Email, { to: 'ada@example.com' });
    expect(proxy.dropAll()).toBeGreaterThan(0);
    // At once: the pool still holds the idle connection whose socket was just reset.
    const err = await call(client, id).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DatabaseUnavailableError);
    expect((err as DatabaseUnavailableError).retryable).toBe(true);
    expect((err as Error).message).toMatch(/^the database connection broke: /);
    expect(await client.getJob(id)).toMatchObject({ id });
  });
});

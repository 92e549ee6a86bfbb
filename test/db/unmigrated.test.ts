// A client on a database that was never migrated answers every call with the
// SchemaVersionError enqueue gives ("workhorse schema not found: run
// `workhorse migrate` ..."). Reads, operator calls and signals used to throw
// pg's bare `schema "workhorse" does not exist` instead, and the HTTP API
// answered them 500 internal; it now answers 503 schema_version.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/client/client.js';
import { SCHEMA_VERSION } from '../../src/db/schemaVersion.js';
import { SchemaVersionError } from '../../src/errors.js';
import { createApp } from '../../src/http/createApp.js';
import { tickRunnerFor } from '../../src/http/tickAdapter.js';
import { createEmptyDatabase } from '../helpers/db.js';
import { startServer } from '../http/support/server.js';

const TOKEN = 'unmigrated-token-0123456789';

let db: Awaited<ReturnType<typeof createEmptyDatabase>>;
let client: Client;

beforeAll(async () => {
  db = await createEmptyDatabase();
  client = createClient({ connectionString: db.url, poolMax: 2 });
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

describe('a database that was never migrated', () => {
  it.each([
    ['getJob', () => client.getJob(1)],
    ['cancel', () => client.cancel(1)],
    ['admin.listQueues', () => client.admin.listQueues()],
    ['admin.listJobs', () => client.admin.listJobs({})],
    ['signalKey', () => client.signalKey('order:1', 'paid', {})],
  ])('%s is a SchemaVersionError saying to migrate', async (_name, call) => {
    const err = await call().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchemaVersionError);
    expect((err as SchemaVersionError).found).toBeNull();
    expect((err as SchemaVersionError).message).toBe(
      `workhorse schema not found: run \`workhorse migrate\` (or migrate()) first; this code expects schema version ${SCHEMA_VERSION}`,
    );
  });

  it('GET /jobs/:id over HTTP is 503 schema_version, not 500', async () => {
    const server = await startServer(createApp({ client, apiToken: TOKEN, tick: tickRunnerFor(client, undefined), log: () => undefined }));
    try {
      const res = await fetch(`${server.url}/jobs/1`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.status).toBe(503);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('schema_version');
    } finally {
      await server.close();
    }
  });
});

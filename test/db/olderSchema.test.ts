// Code running against a database of another schema version whose protocol
// lacks a function the code calls (a deploy before `workhorse migrate`, or
// a newer migration that replaced it): the call fails with a
// SchemaVersionError naming the database's version and the code's, not
// with PostgreSQL's bare `function workhorse.x(...) does not exist`; over
// HTTP it is 503 schema_version. The client's start-up check passed before
// the schema changed under it, as for a long-running worker. At the code's
// own version, a missing function stays PostgreSQL's error.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { postgresProtocol, type Queryable } from '../../src/db/protocol.js';
import { SCHEMA_VERSION } from '../../src/db/schemaVersion.js';
import { SchemaVersionError } from '../../src/errors.js';
import { createApp } from '../../src/http/createApp.js';
import { tickRunnerFor } from '../../src/http/tickAdapter.js';
import { Worker } from '../../src/worker/worker.js';
import { startServer } from '../http/support/server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const TOKEN = 'older-schema-token-0123456789';
const Job = defineJob({ type: 'older.job', queue: 'older', schema: z.object({}) });

let db: TestDatabase;
let client: Client;
let worker: Worker;

/** Records the schema as `version`: drops the newer migration rows, or records one newer than this code. */
async function recordVersion(version: number): Promise<void> {
  await db.pool.query('delete from workhorse.migrations where version > $1', [Math.min(version, SCHEMA_VERSION)]);
  if (version > SCHEMA_VERSION) await db.pool.query(`insert into workhorse.migrations (version, name) values ($1, 'from_newer_code')`, [version]);
}

/** Puts back this code's rows (names as recorded by migrate). */
async function restoreVersion(): Promise<void> {
  await db.pool.query('delete from workhorse.migrations where version > $1', [SCHEMA_VERSION]);
  await db.pool.query(`insert into workhorse.migrations (version, name) values ($1, 'durable') on conflict (version) do nothing`, [SCHEMA_VERSION]);
}

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, poolMax: 3, jobs: [Job] });
  worker = new Worker(client, { queues: ['older'], heartbeatMs: 60_000 });
  worker.handle(Job, () => undefined);
  // Checked and registered while the schema matched.
  await client.ready();
  expect(await client.getJob(1)).toBeNull();
  expect(await worker.runOnce()).toBe(false);
  await db.pool.query('alter function workhorse.get_job_v1(text, bigint) rename to get_job_v1_gone');
  await db.pool.query('alter function workhorse.claim_many_v1(text, text, text[], text[], integer, integer, integer, integer) rename to claim_many_v1_gone');
});

afterEach(restoreVersion);

afterAll(async () => {
  await worker?.stop();
  await client?.close();
  await db?.drop();
});

describe('a protocol function missing from a database of another schema version', () => {
  it('a client call on an older schema is a SchemaVersionError saying to migrate, with the pg error as its cause', async () => {
    await recordVersion(SCHEMA_VERSION - 1);
    const err = await client.getJob(1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchemaVersionError);
    expect(err).toMatchObject({ code: 'schema_version', found: SCHEMA_VERSION - 1, expected: SCHEMA_VERSION });
    expect((err as Error).message).toMatch(
      new RegExp(`^workhorse schema version ${SCHEMA_VERSION - 1} is behind this code \\(expects ${SCHEMA_VERSION}\\): run \`workhorse migrate\` \\(function workhorse\\.get_job_v1\\(`),
    );
    expect(((err as Error).cause as { code?: string }).code).toBe('42883');
  });

  it("a worker's claim on a newer schema is a SchemaVersionError saying to upgrade", async () => {
    await recordVersion(SCHEMA_VERSION + 1);
    const err = await worker.runOnce().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchemaVersionError);
    expect(err).toMatchObject({ found: SCHEMA_VERSION + 1, expected: SCHEMA_VERSION });
    expect((err as Error).message).toMatch(/is ahead of this code .*function workhorse\.claim_many_v1\(/);
  });

  it('GET /jobs/:id over HTTP is 503 schema_version with the versions in its message', async () => {
    await recordVersion(SCHEMA_VERSION - 1);
    const server = await startServer(createApp({ client, apiToken: TOKEN, tick: tickRunnerFor(client, undefined), log: () => undefined }));
    try {
      const res = await fetch(`${server.url}/jobs/1`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.status).toBe(503);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('schema_version');
      expect(body.error.message).toMatch(new RegExp(`^workhorse schema version ${SCHEMA_VERSION - 1} is behind this code \\(expects ${SCHEMA_VERSION}\\)`));
    } finally {
      await server.close();
    }
  });

  it("at this code's own version a missing function stays PostgreSQL's error", async () => {
    const err = await client.getJob(1).catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(SchemaVersionError);
    expect(err).toMatchObject({ code: '42883' });
  });
});

describe('a protocol call that succeeds', () => {
  it('sends its one statement and nothing else (the version is read only after a missing function)', async () => {
    const sent: string[] = [];
    const counting: Queryable = {
      query: ((text: unknown, values?: unknown[]) => {
        sent.push(typeof text === 'string' ? text : (text as { text: string }).text);
        return db.pool.query(text as string, values);
      }) as Queryable['query'],
    };
    expect(await postgresProtocol.listQueues(counting, 'default')).toEqual([]);
    expect(sent).toEqual(['select * from workhorse.list_queues_v1($1)']);
  });
});

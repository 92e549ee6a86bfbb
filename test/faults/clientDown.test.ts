// The client's calls when no connection can be made. A database fault (the
// server refusing connections) is a DatabaseUnavailableError, the network
// error as its cause, as a hung server's is: one type for callers to catch
// and retry on. It used to be the bare `connect ECONNREFUSED` error. A
// connection refused for another reason (a database that does not exist)
// is not a fault to wait out and stays PostgreSQL's own error.
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createClient, DatabaseUnavailableError, defineJob } from '../../src/index.js';
import { serverUrl } from '../helpers/db.js';

const Job = defineJob({ type: 'down.job', schema: z.object({}) });

async function failure(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => new Error('expected the call to fail'),
    (e: unknown) => e,
  );
}

describe('the client with no connection to make', () => {
  it('fails every call with DatabaseUnavailableError while the server refuses connections', async () => {
    // Port 1: nothing listens there, so every connection is refused at once.
    const client = createClient({ connectionString: 'postgres://postgres@127.0.0.1:1/workhorse', jobs: [Job] });
    try {
      for (const [name, call] of [
        ['enqueue', () => client.enqueue(Job, {})],
        ['getJob', () => client.getJob('1')],
        ['listQueues', () => client.admin.listQueues()],
        ['publish', () => client.publish('down.topic', {})],
        ['migrate', () => client.migrate()],
      ] as const) {
        const err = await failure(call());
        expect(err, name).toBeInstanceOf(DatabaseUnavailableError);
        expect((err as DatabaseUnavailableError).message, name).toContain('ECONNREFUSED');
        expect(((err as Error).cause as { code?: string }).code, name).toBe('ECONNREFUSED');
      }
    } finally {
      await client.close();
    }
  });

  it('keeps a refusal that is not a fault (no such database) as PostgreSQL raised it', async () => {
    const url = new URL(serverUrl());
    url.pathname = '/workhorse_no_such_database';
    const client = createClient({ connectionString: url.toString(), jobs: [Job] });
    try {
      const err = await failure(client.getJob('1'));
      expect(err).not.toBeInstanceOf(DatabaseUnavailableError);
      expect((err as { code?: string }).code).toBe('3D000');
    } finally {
      await client.close();
    }
  });
});

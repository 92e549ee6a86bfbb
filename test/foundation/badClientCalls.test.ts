// Bad arguments to the client's calls are typed errors that write nothing:
// cancel's options (a truthy string or a typo must not decide whether the
// children are cancelled, nor cancel at all).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { ValidationError } from '../../src/errors.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const Ping = defineJob({ type: 'ping', schema: z.object({ n: z.number() }) });

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Ping], poolMax: 2 });
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

async function refusal(p: Promise<unknown>): Promise<ValidationError> {
  const err = await p.then(
    () => new Error('expected a ValidationError, the call succeeded'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ValidationError);
  return err as ValidationError;
}

describe('bad client calls', () => {
  it('cancel refuses options that are not { keepChildren?: boolean } and leaves the job as it was', async () => {
    const { id } = await client.enqueue(Ping, { n: 1 });
    for (const bad of [{ keepChildren: 'yes' }, { keepChilds: true }, null, 'keep']) {
      const err = await refusal(client.cancel(id, bad as never));
      expect(err.message).toContain('cancel options');
    }
    expect((await client.getJob(id))!.status).toBe('ready');
    expect((await client.cancel(id, { keepChildren: true })).status).toBe('cancelled');
  });
});

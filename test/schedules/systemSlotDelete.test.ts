// The built-in sys.* slots are stored by every tick and worker that fires
// the sys namespace, at its start. schedules.delete('sys.retention') used
// to remove the row anyway: retention then stopped until the next worker
// started, without a word. It is refused now, changing nothing;
// schedules.disable stops a built-in slot for good.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, Schedules, ValidationError, Worker, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url });
  // A worker that fires the sys namespace stores the built-in slots at its start.
  const worker = new Worker(client, { pollMs: 100, scheduleNamespaces: ['sys'] });
  const run = worker.run();
  await waitFor(() => new Schedules(client).list(), (l) => l.some((s) => s.name === 'sys.retention'), { what: 'sys.retention to be stored' });
  await worker.stop();
  await run;
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

describe('deleting a built-in slot', () => {
  it('is a ValidationError that deletes nothing', async () => {
    const schedules = new Schedules(client);
    const err = await schedules.delete('sys.retention').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as Error).message).toMatch(/^cannot delete schedule "sys\.retention": it is a built-in slot.*disable it instead$/);
    expect((await schedules.get('sys.retention')).name).toBe('sys.retention');
  });

  it('disabling it still works', async () => {
    const schedules = new Schedules(client);
    expect((await schedules.disable('sys.retention')).enabled).toBe(false);
  });
});

// Handlers that throw values which are hard to read (an object String()
// cannot convert, a throwing getter) or that carry text PostgreSQL's jsonb
// refuses (NUL, lone surrogates), and handlers that return results jsonb
// refuses, all in one worker process beside plain jobs settled in the same
// batches. The process must stay alive, every odd job must end `failed` with
// a readable last_error on its own attempts (never by lease expiry), and
// every plain job must succeed on its first attempt.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';
import { Odd, returned, thrown } from '../fixtures/oddValues.js';
import { killAll, spawnWorker, type SpawnedWorker } from '../fixtures/spawnWorker.js';

let db: TestDatabase;
let client: Client;
const workers: SpawnedWorker[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Odd] });
});
afterEach(() => killAll(workers));
afterAll(async () => {
  await client.close();
  await db.drop();
});

describe('odd thrown and returned values', () => {
  it('fail only their own job, with a stored error, and never end the worker process', async () => {
    const names = [...Object.keys(thrown), ...Object.keys(returned)];
    const plain = Array.from({ length: 30 }, (_, i) => `plain${i}`);
    const all = [...names, ...plain];
    const ids = (await client.enqueueMany(all.map((k) => ({ job: Odd, payload: { k } })))).map((r) => r.id);
    const w = spawnWorker({ url: db.url, label: 'odd-1' }, 'oddWorker.ts');
    workers.push(w);
    const jobs = await waitFor(
      async () => {
        if (w.child.exitCode !== null || w.child.signalCode !== null) throw new Error(`the worker process ended:\n${w.output()}`);
        return Promise.all(ids.map((id) => client.getJob(id)));
      },
      (js) => js.every((j) => j!.status === 'succeeded' || j!.status === 'failed'),
      { what: 'every job to settle', timeoutMs: 30_000 },
    );
    const byName = new Map(all.map((k, i) => [k, jobs[i]!]));
    for (const k of Object.keys(thrown)) {
      const j = byName.get(k)!;
      expect({ k, status: j.status, attempt: j.attempt }).toEqual({ k, status: 'failed', attempt: 2 });
      expect({ k, name: (j.lastError as { name: string }).name }).not.toEqual({ k, name: 'LeaseExpired' });
      expect(typeof (j.lastError as { message: unknown }).message).toBe('string');
    }
    expect((byName.get('nulInMessage')!.lastError as { message: string }).message).toBe('bad\ufffdbyte');
    expect((byName.get('loneSurrogateInMessage')!.lastError as { message: string }).message).toBe('bad\ufffdhalf');
    for (const k of Object.keys(returned)) {
      const j = byName.get(k)!;
      expect({ k, status: j.status, attempt: j.attempt, name: (j.lastError as { name: string }).name }).toEqual({
        k,
        status: 'failed',
        attempt: 1,
        name: 'ValidationError',
      });
    }
    expect((byName.get('nulInResult')!.lastError as { message: string }).message).toMatch(/at s: it must not contain a NUL/);
    for (const k of plain) expect({ k, status: byName.get(k)!.status, attempt: byName.get(k)!.attempt }).toEqual({ k, status: 'succeeded', attempt: 1 });
    w.child.kill('SIGTERM');
    expect((await w.exited).code).toBe(0);
  }, 60_000);
});

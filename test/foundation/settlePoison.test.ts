// A settlement batch the database refuses for a reason other than a fault
// (here a result jsonb cannot take, written past the worker's own checks) is
// written again one member at a time: the member it refuses gets the error
// and is left to recovery, and the rest of its batch settles.
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, defineJob, type Client } from '../../src/index.js';
import * as protocol from '../../src/db/protocol.js';
import { Settler, type SettleCallback } from '../../src/worker/settler.js';
import { createTestDatabase, registerWorkerRow, type TestDatabase } from '../helpers/db.js';

const Echo = defineJob({ type: 'poison.echo', schema: z.object({ i: z.number().int() }) });

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Echo], poolMax: 4 });
});
afterAll(async () => {
  await client.close();
  await db.drop();
});

async function claim(n: number, workerId: string) {
  await client.enqueueMany(Array.from({ length: n }, (_, i) => ({ job: Echo, payload: { i } })));
  await registerWorkerRow(client.pool, client.namespace, workerId);
  const claimed = await protocol.claimMany(client.pool, client.namespace, {
    workerId,
    queues: ['default'],
    types: ['poison.echo'],
    limit: n,
    leaseMs: 60_000,
  });
  expect(claimed).toHaveLength(n);
  return claimed.sort((a, b) => Number(a.id) - Number(b.id));
}

const settle = (f: (done: SettleCallback) => void) => new Promise<Parameters<SettleCallback>>((resolve) => f((...a) => resolve(a)));

describe('a batch with a member the database refuses', () => {
  it('settles the other completions and fails only that member', async () => {
    const [first, ...rest] = await claim(5, 'poison-complete');
    const settler = new Settler(client.pool, client.namespace);
    // The first completion starts a write at once; the other four, queued
    // meanwhile, are the next batch, with the refused result in the middle.
    const outcomes = await Promise.all([
      settle((d) => settler.complete({ id: first!.id, execution: first!.execution, resultJson: '1' }, d)),
      ...rest.map((j, i) =>
        settle((d) => settler.complete({ id: j.id, execution: j.execution, resultJson: i === 1 ? '{"s":"\\u0000"}' : '2' }, d)),
      ),
    ]);
    expect(outcomes.map(([o]) => o)).toEqual([
      { accepted: true, status: 'succeeded' },
      { accepted: true, status: 'succeeded' },
      undefined,
      { accepted: true, status: 'succeeded' },
      { accepted: true, status: 'succeeded' },
    ]);
    expect((outcomes[2]![1] as Error).message).toMatch(/unsupported Unicode escape sequence/);
    const jobs = await Promise.all([first!, ...rest].map((j) => client.getJob(j.id)));
    expect(jobs.map((j) => j!.status)).toEqual(['succeeded', 'succeeded', 'running', 'succeeded', 'succeeded']);
  });

  it('settles the other failures too', async () => {
    const [first, ...rest] = await claim(3, 'poison-fail');
    const settler = new Settler(client.pool, client.namespace);
    const bad = { toJSON: () => undefined, nested: 1n }; // JSON.stringify of a BigInt throws inside the batch write
    const outcomes = await Promise.all([
      settle((d) => settler.fail({ id: first!.id, execution: first!.execution, error: { message: 'a' } }, d)),
      settle((d) => settler.fail({ id: rest[0]!.id, execution: rest[0]!.execution, error: { n: 1n } }, d)),
      settle((d) => settler.fail({ id: rest[1]!.id, execution: rest[1]!.execution, error: bad, final: true }, d)),
    ]);
    expect(outcomes.map(([o]) => o?.accepted)).toEqual([true, undefined, true]);
    const jobs = await Promise.all([first!, ...rest].map((j) => client.getJob(j.id)));
    expect(jobs.map((j) => j!.status)).toEqual(['ready', 'running', 'failed']);
  });
});

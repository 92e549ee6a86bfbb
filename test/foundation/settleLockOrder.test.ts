// A batch settlement (completeMany, failMany: what the worker's settler
// sends) locks its leases in job id order, whatever order the batch lists
// them in: the order a cancel of a job tree takes them (parents
// first, and a parent's id is below its children's). Before, it locked them
// in the batch's order, so a batch holding a child's lease while waiting for
// its parent's, against a cancel holding the parent's and asking for the
// child's, was a deadlock PostgreSQL broke by aborting one of them. The
// interleaving is forced on separate connections (pg_blocking_pids), not
// timed; the other session stands for cancel_v1, taking the leases in id order.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { completeMany, failMany } from '../../src/db/protocol.js';
import { createTestDatabase, registerWorkerRow, type TestDatabase } from '../helpers/db.js';
import { blockedBy, Sessions } from '../helpers/sessions.js';

const NS = 'lock-order';
const WORKER = 'order-worker';
const TYPE = 'order.job';

let db: TestDatabase;
const sessions = new Sessions(() => db.url);

beforeAll(async () => {
  db = await createTestDatabase();
  await registerWorkerRow(db.pool, NS, WORKER, [TYPE]);
});
afterEach(async () => {
  await sessions.endAll();
});
afterAll(async () => {
  await db.drop();
});

/** Two claimed jobs, lower id first. */
async function twoLeases(): Promise<{ id: string; execution: string }[]> {
  await db.pool.query('select workhorse.enqueue_v1($1, $2)', [NS, { type: TYPE }]);
  await db.pool.query('select workhorse.enqueue_v1($1, $2)', [NS, { type: TYPE }]);
  const r = await db.pool.query<{ id: string; execution: string }>(
    'select id, execution from workhorse.claim_many_v1($1, $2, $3, $4, 2, 60000) order by id',
    [NS, WORKER, ['default'], [TYPE]],
  );
  expect(r.rows).toHaveLength(2);
  return r.rows;
}

type Lease = { id: string; execution: string };
const settlements = {
  complete: (c: pg.Client, ls: Lease[]) => completeMany(c, NS, ls.map((l) => ({ id: l.id, execution: Number(l.execution), resultJson: '{}' }))).then((s) => [...s]),
  fail: (c: pg.Client, ls: Lease[]) => failMany(c, NS, ls.map((l) => ({ id: l.id, execution: Number(l.execution), error: { message: 'x' } }))).then((m) => [...m.keys()]),
};

describe.each(Object.entries(settlements))('%s_many_v1 given its leases in descending id order', (_name, settle) => {
  it('takes them in id order, so a session taking them in id order too never deadlocks with it', async () => {
    const [low, high] = await twoLeases();
    const other = await sessions.connect();
    const settler = await sessions.connect();
    await other.c.query('begin');
    await other.c.query('select 1 from workhorse.job_runtime where job_id = $1 for update', [low!.id]);

    const settled = settle(settler.c, [high!, low!]);
    await blockedBy(db.pool, settler.pid, other.pid, 'the settlement to wait for the lower lease');
    // Taking the higher lease next: before, the settlement held it already (a deadlock).
    await other.c.query("set local lock_timeout = '5s'");
    await other.c.query('select 1 from workhorse.job_runtime where job_id = $1 for update', [high!.id]);
    await other.c.query('commit');

    expect((await settled).sort()).toEqual([low!.id, high!.id].sort());
    expect((await db.pool.query('select count(*)::int as n from workhorse.job_runtime')).rows[0].n).toBe(0);
  });
});

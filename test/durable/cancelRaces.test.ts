// Cancelling a parent while its tree is busy: a spawn in flight, a claim
// of the parent, a child settling and waking it, a cancel of a child. Each
// test drives the protocol functions on separate connections, holds one of
// them inside an open transaction, and waits until the other is blocked on it
// (pg_blocking_pids) before letting it go, so the interleaving is forced,
// not timed. The guarantee: once cancel_v1 returns, the parent is cancelled
// and every child it spawned is cancelled too, or the spawn was refused
// with WH409 (stale lease); and cancelling never deadlocks with the tree's
// own settlements or with another cancel in the same tree.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, registerWorkerRow, type TestDatabase } from '../helpers/db.js';
import { blockedBy as waitForBlock, Sessions } from '../helpers/sessions.js';

const NS = 'cancel-races';
const WORKER = 'race-worker';
const PARENT = 'race.parent';
const CHILD = 'race.child';

let db: TestDatabase;
const sessions = new Sessions(() => db.url);

beforeAll(async () => {
  db = await createTestDatabase();
  await registerWorkerRow(db.pool, NS, WORKER, [PARENT, CHILD]);
});
afterEach(async () => {
  await sessions.endAll();
});
afterAll(async () => {
  await db.drop();
});

/** A connection of its own (not the pool's), with its backend pid. */
const connection = () => sessions.connect();

/** Resolves once backend `pid` waits for a lock held by backend `holder` (any backend: null). */
const blockedBy = (pid: number, holder: number | null, what: string) => waitForBlock(db.pool, pid, holder, what);

async function enqueue(type: string, queue: string): Promise<string> {
  const r = await db.pool.query<{ id: string }>('select id from workhorse.enqueue_v1($1, $2)', [NS, { type, queue }]);
  return r.rows[0]!.id;
}

/** Claims the one due job of `type` in `queue`: its execution, or null when the claim got nothing. */
async function claim(q: Pick<pg.Pool, 'query'>, queue: string, type: string): Promise<{ id: string; execution: string } | null> {
  const r = await q.query<{ id: string; execution: string }>(
    'select id, execution from workhorse.claim_v1($1, $2, $3, $4, $5)',
    [NS, WORKER, [queue], [type], 60_000],
  );
  return r.rows[0] ?? null;
}

/** The statements of one spawn of child `name` by lease (job, execution), on `c`, inside the caller's transaction. */
async function spawnIn(c: pg.Client, job: string, execution: string, name: string, queue: string): Promise<string> {
  await c.query('select workhorse.begin_spawn_v1($1, $2, $3, $4)', [NS, job, execution, name]);
  const child = (await c.query<{ id: string }>('select id from workhorse.enqueue_v1($1, $2)', [NS, { type: CHILD, queue }])).rows[0]!.id;
  await c.query('select workhorse.link_child_v1($1, $2, $3, $4, $5, false)', [NS, job, execution, name, child]);
  return child;
}

async function spawn(job: string, execution: string, name: string, queue: string): Promise<string> {
  const { c } = await connection();
  await c.query('begin');
  const child = await spawnIn(c, job, execution, name, queue);
  await c.query('commit');
  return child;
}

async function statusOf(id: string): Promise<string> {
  return (await db.pool.query<{ status: string }>('select status from workhorse.jobs where id = $1', [id])).rows[0]!.status;
}

async function childrenOf(id: string): Promise<{ id: string; status: string }[]> {
  const r = await db.pool.query<{ id: string; status: string }>(
    `select j.id, j.status from workhorse.job_children c join workhorse.jobs j on j.id = c.child_id
      where c.parent_id = $1 order by j.id`,
    [id],
  );
  return r.rows;
}

function cancel(c: pg.Client, id: string): Promise<string> {
  return c.query<{ status: string }>('select status from workhorse.cancel_v1($1, $2)', [NS, id]).then((r) => r.rows[0]!.status);
}

/** Fails lease (job, execution) with a retry due now: the job is ready again, without a lease. */
async function retryNow(job: string, execution: string): Promise<void> {
  await db.pool.query('select workhorse.fail_many_v1($1, $2, $3, $4, $5)', [NS, [job], [execution], [{ message: 'again' }], [0]]);
}

/**
 * A parent of `queue` that ran once, spawned one child (not claimed) into
 * each of `kidQueues`, and is ready again (a retry due now) without a lease.
 */
async function readyParentWithChildren(queue: string, kidQueues: string[]): Promise<{ parent: string; children: string[] }> {
  const parent = await enqueue(PARENT, queue);
  const lease = (await claim(db.pool, queue, PARENT))!;
  const children: string[] = [];
  for (const [i, q] of kidQueues.entries()) children.push(await spawn(parent, lease.execution, `kid-${i}`, q));
  await retryNow(parent, lease.execution);
  return { parent, children };
}

describe('cancel_v1 against a parent spawning a child', () => {
  it('cancels a child whose spawn was in flight when the cancel began', async () => {
    const parent = await enqueue(PARENT, 'q-inflight');
    const lease = (await claim(db.pool, 'q-inflight', PARENT))!;
    const spawner = await connection();
    const canceller = await connection();

    await spawner.c.query('begin');
    const child = await spawnIn(spawner.c, parent, lease.execution, 'late', 'q-inflight');
    const cancelled = cancel(canceller.c, parent);
    await blockedBy(canceller.pid, spawner.pid, 'the cancel to wait for the spawn');
    await spawner.c.query('commit');

    expect(await cancelled).toBe('cancelled');
    expect(await statusOf(parent)).toBe('cancelled');
    expect(await statusOf(child)).toBe('cancelled');
  });

  it('refuses a spawn that comes after the cancel locked the parent (WH409), leaving no child', async () => {
    const parent = await enqueue(PARENT, 'q-after');
    const lease = (await claim(db.pool, 'q-after', PARENT))!;
    const spawner = await connection();
    const canceller = await connection();

    await canceller.c.query('begin');
    expect(await cancel(canceller.c, parent)).toBe('cancelled');
    await spawner.c.query('begin');
    const spawned = spawnIn(spawner.c, parent, lease.execution, 'too-late', 'q-after').then(
      () => null,
      (err: { code?: string }) => err.code,
    );
    await blockedBy(spawner.pid, canceller.pid, 'the spawn to wait for the cancel');
    await canceller.c.query('commit');

    expect(await spawned).toBe('WH409');
    await spawner.c.query('rollback');
    expect(await statusOf(parent)).toBe('cancelled');
    expect(await childrenOf(parent)).toEqual([]);
  });

  it('keeps a ready parent from being claimed (and spawning) while its children are being cancelled', async () => {
    const { parent, children } = await readyParentWithChildren('q-claim', ['q-claim']);
    // The child runs; a transaction of its handler holds its lease, so the
    // cancel's walk over the children stops there.
    const kid = (await claim(db.pool, 'q-claim', CHILD))!;
    expect(kid.id).toBe(children[0]);
    const kidStep = await connection();
    const canceller = await connection();
    await kidStep.c.query('begin');
    await kidStep.c.query('select workhorse.begin_spawn_v1($1, $2, $3, $4)', [NS, kid.id, kid.execution, 'grandkid']);

    const cancelled = cancel(canceller.c, parent);
    await blockedBy(canceller.pid, kidStep.pid, 'the cancel to wait for the child\'s lease');
    // The parent is due and has no lease: a worker tries to claim it now,
    // and if it gets it, its handler spawns.
    const claimed = await claim(db.pool, 'q-claim', PARENT);
    if (claimed) await spawn(parent, claimed.execution, 'in-the-gap', 'q-claim');
    await kidStep.c.query('commit');

    expect(await cancelled).toBe('cancelled');
    expect(claimed).toBeNull();
    expect(await statusOf(parent)).toBe('cancelled');
    const left = await childrenOf(parent);
    expect(left.map((c) => c.status)).toEqual(left.map(() => 'cancelled'));
    expect(left.map((c) => c.id)).toEqual(children);
  });
});

describe('cancel_v1 against the tree settling', () => {
  it('does not deadlock with a child that settles and wakes the parent while the cancel walks the children', async () => {
    // Two children: the first not started, the second running and settling
    // while the cancel, having reached the first, waits for its lease.
    const { parent, children } = await readyParentWithChildren('q-settle', ['q-settle-idle', 'q-settle']);
    const second = await claim(db.pool, 'q-settle', CHILD);
    expect(second?.id).toBe(children[1]);
    const holder = await connection();
    const settler = await connection();
    const canceller = await connection();

    // A transaction of the second child's handler holds its lease: the
    // settlement queues for it first, then the cancel.
    await holder.c.query('begin');
    await holder.c.query('select workhorse.begin_spawn_v1($1, $2, $3, $4)', [NS, second!.id, second!.execution, 'x']);
    const settled = settler.c
      .query<{ id: string }>('select * from workhorse.complete_many_v1($1, $2, $3, $4) as id', [
        NS, [second!.id], [second!.execution], [{ ok: true }],
      ])
      .then((r) => r.rows.map((x) => String(x.id)), (err: { code?: string }) => `error ${err.code}`);
    await blockedBy(settler.pid, holder.pid, 'the settlement to wait for the child\'s lease');
    const cancelled = cancel(canceller.c, parent).catch((err: { code?: string }) => `error ${err.code}`);
    // Queued behind the settlement for the same lease.
    await blockedBy(canceller.pid, null, 'the cancel to wait for the child\'s lease');
    await holder.c.query('rollback');

    expect(await settled).toEqual([second!.id]);
    expect(await cancelled).toBe('cancelled');
    expect(await statusOf(parent)).toBe('cancelled');
    expect(await statusOf(children[0]!)).toBe('cancelled');
    expect(await statusOf(children[1]!)).toBe('succeeded');
  });

  it('does not deadlock with a cancel of one of its children running at the same time', async () => {
    // Parent -> child -> grandchild; parent and child are ready without a
    // lease, the grandchild runs and a transaction of its handler holds its lease.
    const { parent, children } = await readyParentWithChildren('q-two', ['q-two-kid']);
    const kid = (await claim(db.pool, 'q-two-kid', CHILD))!;
    const grandchild = await spawn(kid.id, kid.execution, 'grandkid', 'q-two-grandkid');
    await retryNow(kid.id, kid.execution);
    const grand = (await claim(db.pool, 'q-two-grandkid', CHILD))!;
    expect(grand.id).toBe(grandchild);
    const holder = await connection();
    const childCanceller = await connection();
    const parentCanceller = await connection();
    await holder.c.query('begin');
    await holder.c.query('select workhorse.begin_spawn_v1($1, $2, $3, $4)', [NS, grand.id, grand.execution, 'x']);

    const childCancelled = cancel(childCanceller.c, children[0]!).catch((err: { code?: string }) => `error ${err.code}`);
    await blockedBy(childCanceller.pid, holder.pid, 'the child\'s cancel to wait for the grandchild\'s lease');
    const parentCancelled = cancel(parentCanceller.c, parent).catch((err: { code?: string }) => `error ${err.code}`);
    await blockedBy(parentCanceller.pid, null, 'the parent\'s cancel to wait for the grandchild\'s lease');
    await holder.c.query('rollback');

    expect(await childCancelled).toBe('cancelled');
    expect(await parentCancelled).toBe('cancelled');
    for (const id of [parent, children[0]!, grandchild]) expect(await statusOf(id)).toBe('cancelled');
  });
});

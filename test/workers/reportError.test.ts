// A worker nobody listens to for `error` events logs what it carries on
// through as one line: a database fault, anything PostgreSQL answered (a
// refused login while a password is rotated, a lock timeout: each used to
// be printed whole, some 35 to 80 lines, on every heartbeat retry), and
// workhorse's own typed errors. A bug is still printed whole. Each line
// names the call that met the fault (a heartbeat, a claim, a settlement).
import { EventEmitter } from 'node:events';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { WorkerNotRegisteredError } from '../../src/errors.js';
import { defineJob } from '../../src/index.js';
import { reportWorkerError } from '../../src/worker/reportError.js';
import type { WorkerEvents } from '../../src/worker/workerTypes.js';
import { startRunningWorker } from '../helpers/runningWorker.js';
import { waitFor } from '../helpers/wait.js';

function pgError(message: string, code: string): Error {
  const err = new pg.DatabaseError(message, message.length, 'error');
  Object.assign(err, { severity: 'FATAL', code });
  return err;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('reportWorkerError with no error listener', () => {
  it.each([
    ['a refused login', pgError('password authentication failed for user "wh"', '28P01'), /password authentication failed for user "wh" \(28P01\); the database refuses this login: fix its credentials$/],
    ['a lock timeout', pgError('canceling statement due to lock timeout', '55P03'), /canceling statement due to lock timeout \(55P03\)$/],
    ['a worker the registry dropped', new WorkerNotRegisteredError('w1', 'default'), /WorkerNotRegisteredError: /],
  ])('logs %s as one line', (_what, err, line) => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    reportWorkerError(new EventEmitter<WorkerEvents>(), 'w1', err, 'heartbeat failed');
    expect(log).toHaveBeenCalledTimes(1);
    expect(log.mock.calls[0]).toHaveLength(1);
    const text = String(log.mock.calls[0]![0]);
    expect(text).toMatch(/^\[workhorse\] worker w1: heartbeat failed: /);
    expect(text).toMatch(line);
    expect(text).not.toContain('\n');
  });

  it('prints a bug whole, stack included', () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const bug = new TypeError('x is not a function');
    reportWorkerError(new EventEmitter<WorkerEvents>(), 'w1', bug);
    expect(log).toHaveBeenCalledWith('[workhorse] worker w1: error:', bug);
  });

  it('emits it instead when someone listens', () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const events = new EventEmitter<WorkerEvents>();
    const seen: unknown[] = [];
    events.on('error', (e) => seen.push(e));
    const err = pgError('canceling statement due to lock timeout', '55P03');
    reportWorkerError(events, 'w1', err);
    expect(seen).toEqual([err]);
    expect(log).not.toHaveBeenCalled();
  });
});

describe('a running worker with no error listener', () => {
  /** Until `ok()` holds (the shared waitFor: it fails naming `what` after 10 s). */
  const until = (ok: () => boolean, what: string) => waitFor(ok, Boolean, { timeoutMs: 10_000, what });

  /** The console's error lines, and a worker (of `heartbeatMs`) whose one job runs until released. */
  async function busyWorker(workerId: string, heartbeatMs: number) {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')));
    const Noop = defineJob({ type: 'report.noop', schema: z.object({}) });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started = false;
    const w = await startRunningWorker([Noop], { heartbeatMs, pollMs: 50, workerId }, (worker) =>
      worker.handle(Noop, async () => {
        started = true;
        await gate;
      }),
    );
    await w.client.enqueue(Noop, {});
    await until(() => started, 'the job to start');
    return {
      lines,
      w,
      async stop() {
        release();
        await w.stop();
      },
    };
  }

  it('logs a failing heartbeat as one line naming the heartbeat when the fault begins and one when it ends, however many beats fail', async () => {
    // A lease of 4 x 1 s: the fault below (about 1.5 s of beats every second or sooner) stays well within it,
    // whatever the machine's load (a lease of 2 s ran out on a loaded run, adding lost-lease lines).
    const { lines, w, stop } = await busyWorker('w-hb', 1_000);
    try {
      // Every heartbeat now meets an error PostgreSQL answers (no such function).
      await w.db.pool.query('alter function workhorse.heartbeat_many_v1 rename to heartbeat_many_v1_gone');
      await until(() => lines.some((l) => l.includes('heartbeat:')), 'the fault line');
      await new Promise((r) => setTimeout(r, 1_500));
      await w.db.pool.query('alter function workhorse.heartbeat_many_v1_gone rename to heartbeat_many_v1');
      await until(() => lines.some((l) => l.includes('heartbeat: database reachable again')), 'the recovery line');
    } finally {
      await stop();
    }
    const beat = lines.filter((l) => l.includes(': heartbeat: '));
    const between = beat.slice(1, -1);
    expect(between.length, lines.join('\n')).toBeLessThanOrEqual(2);
    for (const l of between) expect(l).toMatch(/^\[workhorse\] worker w-hb: heartbeat: another error during the same fault: /);
    beat.splice(1, between.length);
    expect(beat[0]).toMatch(
      /^\[workhorse\] worker w-hb: heartbeat: database fault; the leases are held for up to a lease \(4000 ms\) from the last beat that reached the database, and the beat is tried again sooner, logged again when it is over: .*heartbeat_many_v1.*run `workhorse migrate`/,
    );
    expect(beat[1]).toMatch(/^\[workhorse\] worker w-hb: heartbeat: database reachable again after \d+\.\d s \((\d+) failed tries\)$/);
    expect(Number(/\((\d+) failed tries\)/.exec(beat[1]!)![1])).toBeGreaterThanOrEqual(2);
    expect(lines.filter((l) => l.includes('lost its lease'))).toEqual([]);
  });

  it('still says each lease a long heartbeat fault cost', async () => {
    const { lines, w, stop } = await busyWorker('w-hb2', 200);
    try {
      await w.db.pool.query('alter function workhorse.heartbeat_many_v1 rename to heartbeat_many_v1_gone');
      // Failing for longer than a lease (4 x 200 ms), the lease is given up, and said to have run out.
      await until(() => lines.some((l) => l.includes('lost its lease')), 'the lost-lease line');
      await w.db.pool.query('alter function workhorse.heartbeat_many_v1_gone rename to heartbeat_many_v1');
    } finally {
      await stop();
    }
    expect(lines.filter((l) => / database fault: /.test(l))).toEqual([]);
    const late = lines.find((l) => l.includes('lost its lease'));
    expect(late, lines.join('\n')).toMatch(
      /^\[workhorse\] worker w-hb2: job \d+ \(report\.noop\) lost its lease \(lease of job \d+ execution 1 ran out: no heartbeat reached the database for its whole lease \(800 ms\)\)/,
    );
  });

  it('logs settlements refused for a while as one line when it begins and one when they are written, and loses no outcome', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')));
    const Noop = defineJob({ type: 'report.settle', schema: z.object({ n: z.number() }) });
    let ran = 0;
    // A lease of 20 s: the refusals are written again for that long, whatever the machine's load (at 4 s a slow
    // run gave them up, a line of its own).
    const w = await startRunningWorker([Noop], { heartbeatMs: 5_000, pollMs: 50, workerId: 'w-st', concurrency: 4 }, (worker) =>
      worker.handle(Noop, async () => {
        ran++;
      }),
    );
    try {
      // Every settlement now meets an error PostgreSQL answers (no such function), refused for an operator to fix.
      await w.db.pool.query('alter function workhorse.complete_many_v1 rename to complete_many_v1_gone');
      for (let n = 0; n < 8; n++) await w.client.enqueue(Noop, { n });
      await until(() => ran >= 8, 'all eight handlers to run');
      // Written again with backoff (100 ms doubling): a few tries fail meanwhile.
      await new Promise((r) => setTimeout(r, 1_000));
      await w.db.pool.query('alter function workhorse.complete_many_v1_gone rename to complete_many_v1');
      await until(() => lines.some((l) => l.includes('settlement: database reachable again')), 'the recovery line');
      // The first write that goes through ends the fault; the other batches' retries follow within their backoff.
      const succeeded = async () =>
        (
          await w.db.pool.query<{ n: number }>("select count(*)::int as n from workhorse.jobs where namespace = $1 and type = 'report.settle' and status = 'succeeded'", [
            w.client.namespace,
          ])
        ).rows[0]!.n;
      const n = await waitFor(succeeded, (x) => x >= 8, { timeoutMs: 10_000, what: 'every outcome written' }).catch(() => succeeded());
      expect(n).toBe(8);
    } finally {
      await w.stop();
    }
    // One line when the fault begins, one when it ends; between them at most two more, each for another
    // kind of error during the same fault (a call racing the rename can meet a different SQLSTATE).
    const settle = lines.filter((l) => l.includes('settlement'));
    const between = settle.slice(1, -1);
    expect(between.length, lines.join('\n')).toBeLessThanOrEqual(2);
    for (const l of between) expect(l).toMatch(/^\[workhorse\] worker w-st: settlement: another error during the same fault: /);
    settle.splice(1, between.length);
    expect(settle[0]).toMatch(
      /^\[workhorse\] worker w-st: settlement: refused; the outcomes are kept and written again for up to the lease \(20000 ms\), logged again when it is over: .*complete_many_v1.*run `workhorse migrate`/,
    );
    expect(settle[1]).toMatch(/^\[workhorse\] worker w-st: settlement: database reachable again after \d+\.\d s \(\d+ failed tries\)$/);
  });
});

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
    ['a refused login', pgError('password authentication failed for user "wh"', '28P01'), /password authentication failed for user "wh" \(28P01\); the database refuses the worker's login: fix its credentials$/],
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
  it('names the call a database fault met: a failing heartbeat logs "heartbeat failed", not a bare "database fault"', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')));
    const Noop = defineJob({ type: 'report.noop', schema: z.object({}) });
    // A worker holding a lease: each failed beat is a line (an idle one logs the fault's start and end: idleHeartbeatOutage.test.ts).
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started = false;
    const w = await startRunningWorker([Noop], { heartbeatMs: 200, pollMs: 50, workerId: 'w-hb' }, (worker) =>
      worker.handle(Noop, async () => {
        started = true;
        await gate;
      }),
    );
    try {
      await w.client.enqueue(Noop, {});
      while (!started) await new Promise((r) => setTimeout(r, 20));
      // Every heartbeat now meets an error PostgreSQL answers (no such function).
      await w.db.pool.query('alter function workhorse.heartbeat_many_v1 rename to heartbeat_many_v1_gone');
      const deadline = Date.now() + 10_000;
      while (!lines.some((l) => l.includes('heartbeat failed')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      // Failing for longer than a lease (4 x 200 ms), the lease is given up, and said to have run out.
      while (!lines.some((l) => l.includes('lost its lease')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      await w.db.pool.query('alter function workhorse.heartbeat_many_v1_gone rename to heartbeat_many_v1');
    } finally {
      release();
      await w.stop();
    }
    const beat = lines.find((l) => l.includes('heartbeat failed'));
    expect(beat, lines.join('\n')).toMatch(/^\[workhorse\] worker w-hb: heartbeat failed; the leases are held and the beat is tried again sooner: .*heartbeat_many_v1/);
    expect(lines.filter((l) => / database fault: /.test(l))).toEqual([]);
    const late = lines.find((l) => l.includes('lost its lease'));
    expect(late, lines.join('\n')).toMatch(
      /^\[workhorse\] worker w-hb: job \d+ \(report\.noop\) lost its lease \(lease of job \d+ execution 1 ran out: no heartbeat reached the database for its whole lease \(800 ms\)\)/,
    );
  });
});

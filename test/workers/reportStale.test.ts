// A lease a worker lost (its job runs again under another lease) was told
// only to a `stale` listener: with none, nothing was logged, and an operator
// reading the log could not tell why a job ran twice. With no listener it
// is now one line naming the job.
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ClaimedJob } from '../../src/db/protocol.js';
import { StaleLeaseError } from '../../src/errors.js';
import { reportStale } from '../../src/worker/reportError.js';
import type { WorkerEvents } from '../../src/worker/workerTypes.js';

const now = new Date();
const job: ClaimedJob = {
  id: '42', queue: 'default', type: 'report.render', payload: {}, priority: 0, runAt: now, attempt: 1, maxAttempts: 3, execution: 7,
  timeoutMs: null, concurrencyKey: null, progress: null, createdAt: now, leaseExpiresAt: now, traceContext: null,
};

afterEach(() => vi.restoreAllMocks());

describe('a lost lease', () => {
  it('is a stale event when someone listens, and one log line naming the job when nobody does', () => {
    const events = new EventEmitter<WorkerEvents>();
    const lines: unknown[] = [];
    vi.spyOn(console, 'error').mockImplementation((...args) => void lines.push(args.join(' ')));
    const err = new StaleLeaseError('42', 7, 'complete');
    reportStale(events, 'w1', err, job);
    expect(lines).toEqual([expect.stringMatching(/^\[workhorse\] worker w1: job 42 \(report\.render\) lost its lease \(.*\); what this attempt does is discarded: the job was recovered \(it runs again under a new lease\), the database lost its leases \(a crash or failover\), or an operator ended it \(a cancel\)$/)]);
    const heard: unknown[] = [];
    events.on('stale', (e, j) => heard.push([e, j]));
    reportStale(events, 'w1', err, job);
    expect(heard).toEqual([[err, job]]);
    expect(lines).toHaveLength(1);
  });

  it('that ran out while the database could not be reached says so, not that the job was recovered or cancelled', () => {
    const lines: unknown[] = [];
    vi.spyOn(console, 'error').mockImplementation((...args) => void lines.push(args.join(' ')));
    reportStale(new EventEmitter<WorkerEvents>(), 'w1', new StaleLeaseError('42', 7, 'heartbeat', 120_000), job);
    expect(lines).toEqual([
      '[workhorse] worker w1: job 42 (report.render) lost its lease (lease of job 42 execution 7 ran out: no heartbeat reached the database for its whole lease (120000 ms)); ' +
        'what this attempt does is discarded: the database could not be reached, and the job runs again once it can',
    ]);
  });
});

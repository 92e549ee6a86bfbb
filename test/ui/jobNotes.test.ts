// The note column of the Namespace view: the gate of a job's concurrency
// key is named as "held by" another job only for a job that still needs it
// (ready or waiting); a finished job showed the key's current holder as if
// it were blocked by it.
import { describe, expect, it } from 'vitest';
import type { DashboardJobRow } from '../../src/db/dashboard.js';
import type { JobStatus } from '../../src/index.js';
import { jobNotes } from '../../src/http/ui/views/namespaceView.js';

function row(status: JobStatus): DashboardJobRow {
  return {
    id: '7', queue: 'default', type: 'report.build', status, priority: 0, runAt: new Date(), dueInMs: 0, attempt: 1, maxAttempts: 3,
    execution: 1, concurrencyKey: 'tenant:1', dedupeKey: null, createdAt: new Date(), finishedAt: null, errorMessage: null,
    leasedBy: null, leaseExpiresInMs: null, leaseStarted: null, recoveredFrom: null, gateHeldBy: '9', wait: null,
  };
}

const notes = (status: JobStatus) => jobNotes(row(status), new Set()).map(String).join('; ');

describe('the note on a job with a concurrency key', () => {
  it.each(['ready', 'waiting'] as const)('names the job holding the gate of a %s job', (status) => {
    expect(notes(status)).toContain('key <b>tenant:1</b>, held by <a href="/ui/jobs/9">#9</a>');
  });

  it.each(['succeeded', 'failed', 'cancelled'] as const)('names only the key of a %s job', (status) => {
    expect(notes(status)).toContain('key <b>tenant:1</b>');
    expect(notes(status)).not.toContain('held by');
  });
});

// What an operator's cancel answers for a job that had already ended: the
// client's cancel is idempotent (it returns the job as it is), but the HTTP
// API, the dashboard and the CLI say that nothing was cancelled, the same
// way, so a script reading any of them can tell.
import { ConflictError } from '../errors.js';
import type { JobRecord } from '../db/protocol.js';

/** The job `cancel()` returned, or a ConflictError when it was not cancelled (it had ended as something else). */
export function cancelledOrConflict(job: JobRecord): JobRecord {
  if (job.status !== 'cancelled') {
    throw new ConflictError(`job ${job.id} already ended as ${job.status}; only a job that has not ended can be cancelled`);
  }
  return job;
}

// One log line per attempt that failed, for `workhorse worker` (a process
// whose definition does not turn it off): a retry names the attempt and
// when the job runs again is left to the job's backoff; a final failure says
// the job is now a dead letter and how to run it again. Successes and
// durable suspensions are not logged (a fleet runs many of them).
import { errorToJson } from '../errorJson.js';
import { terminalSafe } from '../terminalText.js';
import type { JobOutcome } from './settleJob.js';

/** The line for an outcome, or undefined when it is not logged. */
export function outcomeLine(workerId: string, o: JobOutcome): string | undefined {
  if (o.status !== 'retried' && o.status !== 'failed') return undefined;
  const j = o.job;
  const head = `[workhorse] worker ${workerId}: job ${j.id} (${j.type}) attempt ${j.attempt} of ${j.maxAttempts} failed: ${oneLine(errorToJson(o.error).message)}`;
  return o.status === 'retried'
    ? `${head}; it runs again after its backoff`
    : `${head}; the job failed for good (a dead letter: client.retry(id) or the dashboard's Retry runs it again)`;
}

/** A message on one line, at most 500 characters, its control characters escaped (the handler's text: it may hold ESC or CR). */
function oneLine(message: string): string {
  const flat = terminalSafe(message.replace(/\s*\n\s*/g, ' '));
  return flat.length > 500 ? `${flat.slice(0, 500)}…` : flat;
}

// One demo worker as its own OS process, so the demo can kill it with a real
// SIGKILL. Its configuration arrives as a JSON argument. It stops when the
// demo does: on SIGTERM, or when its stdin (a pipe from the demo) closes.
import * as z from 'zod';
import { logCarriedOn } from '../carriedOn.js';
import { createClient } from '../client/client.js';
import { parseConfig } from '../validation.js';
import { staleLine } from '../worker/reportError.js';
import { Worker } from '../worker/worker.js';
import { configureDemoWorker, demoJobs } from './jobs.js';

/** How long a demo worker drains when the demo is gone (Ctrl-C, its stdin closed) before it stops hard. */
const GONE_STOP_MS = 2_000;
/** What a SIGTERM drain (the story's rolling deploy) allows beyond one job's work, so the running job finishes. */
const DRAIN_SLACK_MS = 5_000;
/** How long a fault is held back before it is printed, so one the demo's own Ctrl-C caused is never printed. */
const FAULT_HOLD_MS = 1_000;

const argsSchema = z.object({
  connectionString: z.string(),
  namespace: z.string(),
  workerId: z.string(),
  build: z.string(),
  heartbeatMs: z.number().int().positive(),
  workMs: z.number().int().positive(),
});

export async function runDemoWorker(raw: string): Promise<void> {
  const a = parseConfig(argsSchema, JSON.parse(raw), 'demo worker arguments');
  const client = createClient({ connectionString: a.connectionString, namespace: a.namespace, jobs: demoJobs, poolMax: 3 });
  const worker = new Worker(client, { workerId: a.workerId, build: a.build, heartbeatMs: a.heartbeatMs, concurrency: 1, pollMs: 200 });
  configureDemoWorker(worker, a.build, a.workMs);
  // SIGTERM is the story's rolling deploy: a graceful drain, long enough for
  // the running job to finish (it is not run again). When the demo is gone
  // (a Ctrl-C, which stops its database beside this worker), the drain is
  // short: one waiting on a settlement it can no longer write would outlive
  // the demo. A shorter stop turns a longer one hard when it passes.
  const stop = (timeoutMs: number) => () => void worker.stop({ timeoutMs }).catch(() => undefined);
  process.on('SIGTERM', stop(a.workMs + DRAIN_SLACK_MS));
  // Once the demo is gone its database is going too: the worker's retries
  // against it ("heartbeat failed … ECONNREFUSED") are not news then. A
  // Ctrl-C stops the database and signals this worker at the same moment,
  // so a fault is held back briefly and printed only if the demo lives on.
  // So is a lease that ran out meanwhile (the demo's database stops with it).
  let quiet = false;
  const holdBack = (print: () => void) => {
    if (quiet) return;
    setTimeout(() => {
      if (!quiet) print();
    }, FAULT_HOLD_MS).unref();
  };
  worker.events.on('error', (err) => holdBack(() => logCarriedOn(`[workhorse] worker ${a.workerId}:`, err)));
  worker.events.on('stale', (err, job) => holdBack(() => console.error(staleLine(a.workerId, err, job))));
  const gone = () => {
    quiet = true;
    stop(GONE_STOP_MS)();
  };
  process.on('SIGINT', gone);
  // The demo holds the other end of stdin: when it is gone, however it ended, drain and leave.
  // Unref'd: it must not keep the process alive once the worker has stopped.
  process.stdin.on('end', gone).on('close', gone).on('error', gone).resume();
  (process.stdin as { unref?: () => void }).unref?.();
  await worker.run();
  await client.close();
  // Nothing of the demo's is left to wait for (a pool connection to a stopped server, say).
  process.exit(0);
}

await runDemoWorker(process.argv[2] ?? '{}');

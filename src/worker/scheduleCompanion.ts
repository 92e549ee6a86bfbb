// A long-lived worker with scheduleNamespaces runs a companion beside its
// claim loop: the slot runner that fires due recurring slots (and, for the
// `sys` namespace, a one-slot system worker for the sys.* jobs). This
// builds it from the worker's resolved options.
import type { Client } from '../client/client.js';
import type { FaultReporter } from '../faultSpell.js';
import { MIN_RUNNER_INTERVAL_MS, SlotRunner, type SystemWorkerStarter } from '../schedules/slotRunner.js';
import type { ResolvedWorkerOptions } from './options.js';
import type { Companion } from './runLoop.js';

export async function startScheduleCompanion(
  client: Client,
  options: ResolvedWorkerOptions,
  faults: FaultReporter,
  startSystemWorker: SystemWorkerStarter,
): Promise<Companion | undefined> {
  const namespaces = options.scheduleNamespaces;
  if (!namespaces) return undefined;
  const runner = new SlotRunner(
    client,
    {
      scheduleNamespaces: namespaces,
      scheduleCatchupLimit: options.scheduleCatchupLimit,
      schedules: options.schedules,
      retention: options.retention,
      // Five polls, within a runner's bounds: at most 5 s, and at least its least interval (a 10 ms poll would give 50 ms).
      intervalMs: Math.max(MIN_RUNNER_INTERVAL_MS, Math.min(5000, options.pollMs * 5)),
      workerId: `${options.workerId}:schedules`,
      system: options.system,
    },
    startSystemWorker,
    faults,
  );
  await runner.start();
  return runner;
}

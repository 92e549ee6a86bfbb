// ScheduleRunner, the public way to run recurring slots beside your own
// loop (say, to store the app's schedule definitions at start): the slot
// runner of src/schedules/, with the worker layer's one-slot system worker
// for the built-in sys.* jobs when it opts into `sys`.
import type { Client } from '../client/client.js';
import { SlotRunner, type ScheduleRunnerOptions } from '../schedules/slotRunner.js';
import { Worker } from './worker.js';

export type { ScheduleRunnerOptions } from '../schedules/slotRunner.js';

export class ScheduleRunner extends SlotRunner {
  constructor(client: Client, options: ScheduleRunnerOptions) {
    super(client, options, (workerId, pollMs, faults, system) => Worker.startSystemWorker(client, workerId, pollMs, faults, system));
  }
}

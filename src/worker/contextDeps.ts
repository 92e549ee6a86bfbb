// What a handler's context needs from its worker: the guarded database and
// protocol, the namespace and worker id, the tick's abort instant, the
// transaction limits of ctx.txStep, the size a progress value may have, and how a spawned child's row is built.
// Its own module so the context and the durable waits can both name it.
import type { EnqueueOptions } from '../client/enqueueInput.js';
import type { JobDefinition } from '../client/defineJob.js';
import type { GuardedDb } from '../db/guardedDb.js';
import type { JobInsert, Protocol } from '../db/protocol.js';
import type { FaultReport } from '../faultSpell.js';

export interface ContextDeps {
  db: GuardedDb;
  protocol: Protocol;
  namespace: string;
  workerId: string;
  deadline: Date | null;
  /** A transactional step's transaction may sit idle this long before the server ends it. */
  txIdleTimeoutMs: number;
  /** One statement inside a transactional step may run this long. */
  txStatementTimeoutMs: number;
  /** How long a handler's fenced write waits out a refusal an operator ends (the lease): refusalWindow.ts. */
  refusalWindowMs: number;
  /** Where the handlers' fenced writes report the faults they wait out (the worker's `handler writes` line). */
  writeFaults: FaultReport;
  /** The largest progress value, in bytes of JSON: the client's maxPayloadBytes. */
  maxProgressBytes: number;
  /** The row a spawned child is enqueued with (validated like an enqueue). */
  childRow(job: JobDefinition | string, payload: unknown, options: EnqueueOptions): JobInsert;
}

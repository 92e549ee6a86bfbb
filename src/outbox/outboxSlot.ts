// sys.outbox, the built-in slot that delivers the outbox. Each cadence
// enqueues a `sys.outbox` job on the `sys` queue; its handler (bound only
// where sinks are configured, so only such workers claim it) runs delivery
// passes until the outbox is empty or its signal aborts, under the job's
// lease: a lost lease or a tick deadline aborts the signal and no further
// delivery starts. It also removes delivered events past their keep time.
// The cadence is a safety net: a worker that fires `sys` slots also
// delivers right after each commit (outboxPump.ts), and such a tick before
// it returns (tick/tickOutbox.ts).
import * as z from 'zod';
import type { Client } from '../client/client.js';
import { defineJob } from '../client/defineJob.js';
import { GuardedDb } from '../db/guardedDb.js';
import { defineSystemSchedule, type ScheduleDefinition } from '../schedules/defineSchedule.js';
import { SYSTEM_QUEUE, SYSTEM_SCHEDULE_NAMESPACE } from '../schedules/retention.js';
import { deliverOutbox, type DeliveryResult } from './deliver.js';
import type { ResolvedOutboxOptions } from './outboxOptions.js';

export const SYS_OUTBOX = 'sys.outbox';

const outboxPayloadSchema = z.object({ maxBatches: z.number().int().min(1).max(100_000).default(1000) }).strict();

export const outboxJob = defineJob({
  type: SYS_OUTBOX,
  schema: outboxPayloadSchema,
  queue: SYSTEM_QUEUE,
  retry: { maxAttempts: 3, backoff: { kind: 'fixed', baseMs: 5000, maxMs: 5000 } },
});

export function outboxSchedule(o: ResolvedOutboxOptions): ScheduleDefinition {
  return defineSystemSchedule({ name: SYS_OUTBOX, job: outboxJob, everyMs: o.everyMs, scheduleNamespace: SYSTEM_SCHEDULE_NAMESPACE, payload: {} });
}

/** Delivered events one run removes at most. */
const PURGE_LIMIT = 1000;

export function outboxHandler(client: Client, o: ResolvedOutboxOptions) {
  // Each call bounded by the outbox lease, as a delivery pass's are: a hung server fails the run rather than holding it.
  const db = new GuardedDb(client.pool, { timeoutMs: o.leaseMs });
  return async (
    payload: z.output<typeof outboxPayloadSchema>,
    ctx: { signal: AbortSignal; job: { id: string; execution: number } },
  ): Promise<DeliveryResult & { purged: number }> => {
    const r = await deliverOutbox(client, o, { signal: ctx.signal, maxBatches: payload.maxBatches, owner: `job:${ctx.job.id}:${ctx.job.execution}`, db });
    const purged = ctx.signal.aborted ? 0 : await client.protocol.purgeOutbox(db, client.namespace, o.keepDeliveredMs, PURGE_LIMIT);
    return { ...r, purged };
  };
}

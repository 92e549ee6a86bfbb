// A settlement in flight when its lease ran out unreached counts as a dropped
// outcome only if the fence then refuses it. The count was taken from the
// lease table when the refusal came back; but by then a claim of the same
// job at a newer execution (recovery handed it back to this very worker) may
// have replaced the old lease there, and the drop went uncounted: a drain
// that had lost an outcome exited 0. The executor now counts it from the
// lease it settled.
import { describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/client.js';
import type { ClaimedJob } from '../../src/db/protocol.js';
import { Executor } from '../../src/worker/executor.js';
import { HandlerRegistry } from '../../src/worker/handlerRegistry.js';
import { LeaseTable } from '../../src/worker/leaseTable.js';
import type { SettleCallback, Settler } from '../../src/worker/settler.js';
import { waitFor } from '../helpers/wait.js';

const job = (execution: number): ClaimedJob => ({
  id: '7', queue: 'default', type: 'drop.count', payload: {}, priority: 0, runAt: new Date(), attempt: 1, maxAttempts: 3, execution,
  timeoutMs: null, concurrencyKey: null, progress: null, createdAt: new Date(), leaseExpiresAt: new Date(), traceContext: null,
});

describe('a settlement refused after its lease ran out unreached', () => {
  it('counts as dropped even when a newer claim of the job has replaced its lease in the table', async () => {
    const client = createClient({ connectionString: 'postgres://nobody@127.0.0.1:1/none' });
    try {
      const handlers = new HandlerRegistry(client);
      handlers.addHandler('drop.count', () => 'done');
      const pending: SettleCallback[] = [];
      const settler = { complete: (_c: unknown, done: SettleCallback) => void pending.push(done) } as unknown as Settler;
      let drops = 0;
      const table = new LeaseTable();
      const executor = new Executor({
        table,
        handlers,
        concurrency: 2,
        settlingCap: 10,
        contextDeps: {} as never,
        settleDeps: { settler, retryDelayMs: undefined, onStale: () => undefined, onSettled: () => undefined, onError: () => undefined },
        onSlotFree: () => undefined,
        onExpiredDrop: () => void drops++,
      });
      const old = table.admit(job(1), () => undefined);
      executor.fill();
      await waitFor(() => pending.length, (n) => n === 1, { what: 'the settlement to be handed to the settler' });
      // No heartbeat reached the database for a whole lease while it was settling (core.ts loseLease).
      old.lost = true;
      old.expiredWhileSettling = true;
      // Recovery handed the job back, and this worker claimed it again: the new lease supersedes the old.
      table.admit(job(2), () => undefined);
      expect(table.at('7', 1)).toBeUndefined();
      // The old settlement comes back refused by the fence.
      pending[0]!({ accepted: false });
      expect(drops).toBe(1);
    } finally {
      await client.close();
    }
  });
});

// When a worker gives up writing handlers' outcomes (here every completion
// is cancelled, as a statement_timeout of 8 ms cancelled them in a fault
// run, until the lease window passes), it says so once per batch, with how
// many outcomes it dropped and that recovery runs those jobs again and
// counts an attempt, and a drain that gave outcomes up says how many and
// does not exit 0. Before, each job's outcome was logged only as the bare
// `settlement: canceling statement due to statement timeout (57014)`, and
// the drain said `drained; exiting 0`. Claims, leases and everything else
// run on the real database; only the completion's statement is replaced by
// one PostgreSQL would have cancelled.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, SettlementDroppedError, type Client } from '../../src/index.js';
import { postgresProtocol, type Protocol } from '../../src/db/protocol.js';
import { EXIT_DRAINED, EXIT_OUTCOMES_DROPPED, runWorkerProcess, stopReport } from '../../src/worker/process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Quick = defineJob({ type: 'dropped.quick', schema: z.object({}) });
let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Quick], poolMax: 4 });
  const protocol: Protocol = {
    ...postgresProtocol,
    completeMany: () => Promise.reject(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014', severity: 'ERROR' })),
  };
  Object.defineProperty(client, 'protocol', { value: protocol });
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

describe('outcomes a worker gives up writing', () => {
  it('are reported once per batch with their count and what happens next, and a drain that dropped them exits 3 saying how many', async () => {
    await client.enqueueMany(Array.from({ length: 3 }, () => ({ job: Quick, payload: {} })));
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let started = 0;
    const errors: unknown[] = [];
    const proc = await runWorkerProcess(
      {
        client: () => client,
        workers: [
          {
            // A 250 ms heartbeat: a 1 s lease, the window a cancelled settlement is written again in.
            options: { concurrency: 3, pollMs: 50, heartbeatMs: 250 },
            configure: (w) => {
              w.events.on('error', (e) => errors.push(e));
              w.handle(Quick, async () => {
                started++;
                await released;
                return 'ok';
              });
            },
          },
        ],
      },
      { log: () => undefined },
    );
    await waitFor(() => started, (n) => n === 3, { what: 'the three handlers to start' });
    proc.shutdown('SIGTERM');
    release();
    expect(await proc.done).toBe('drained');

    const dropped = errors.filter((e): e is SettlementDroppedError => e instanceof SettlementDroppedError);
    expect(dropped.reduce((n, e) => n + e.count, 0)).toBe(3);
    expect(dropped.length).toBeLessThanOrEqual(2);
    expect(dropped[0]!.message).toMatch(/^gave up writing \d job outcomes? \(canceling statement due to statement timeout \(57014\)\): .*recovery runs (it|them) again and counts an attempt$/);
    // Nothing else was reported per job: the retries said they would retry, the drop said it once.
    expect(errors.filter((e) => !(e instanceof SettlementDroppedError) && !(e as { code?: string }).code)).toEqual([]);
    expect(proc.droppedOutcomes()).toEqual({ total: 3, duringDrain: 3 });
    expect(proc.workers[0]!.runtimeState().droppedOutcomes).toBe(3);
    expect(stopReport('drained', proc.droppedOutcomes())).toEqual({
      code: EXIT_OUTCOMES_DROPPED,
      line: "[workhorse] drained, but gave up writing 3 job outcomes during the drain (3 in this process's life): recovery runs those jobs again and counts an attempt (none if the database lost its leases in a crash); exiting 3",
    });
    // Nothing of theirs was written: the jobs are left to recovery.
    expect((await db.pool.query<{ n: number }>("select count(*)::int n from workhorse.jobs where status in ('succeeded', 'failed')")).rows[0]!.n).toBe(0);
  }, 30_000);

  it('a drain that dropped nothing exits 0, naming outcomes given up before it', () => {
    expect(stopReport('drained', { total: 0, duringDrain: 0 })).toEqual({ code: EXIT_DRAINED, line: '[workhorse] drained; exiting 0' });
    expect(stopReport('drained', { total: 2, duringDrain: 0 })).toEqual({
      code: EXIT_DRAINED,
      line: '[workhorse] drained (2 job outcomes given up before the drain, left to recovery); exiting 0',
    });
  });
});

// A worker's LISTEN connection stranded: the server vanished without a
// reset (a failed host behind a name that now leads to a live one), so the
// socket stays open and nothing arrives. A LISTEN connection sends nothing
// of its own, so nothing noticed: it was kept for good, and every wake-up
// waited for the safety poll. It is now asked `select 1` every probe
// interval, and one that does not answer in time is replaced.
import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { DatabaseUnavailableError } from '../../src/errors.js';
import { reportWorkerError } from '../../src/worker/reportError.js';
import pg from 'pg';
import type { WakeHint } from '../../src/client/wakeHints.js';
import { wakeChannel } from '../../src/worker/wakeChannel.js';
import { WakeListener } from '../../src/worker/wakeListener.js';
import { waitFor } from '../helpers/wait.js';
import { useFaultCluster } from './harness.js';

const faultCluster = useFaultCluster();

describe('a stranded LISTEN connection', () => {
  it('is found by its probe and replaced, and hints arrive again', async () => {
    const { cluster, proxy, proxyPort: port } = faultCluster();
    const hints: WakeHint[] = [];
    let reconnects = 0;
    const errors: unknown[] = [];
    const listener = new WakeListener(
      { connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` },
      'default',
      ['q'],
      (h) => hints.push(h),
      () => void reconnects++,
      (err) => errors.push(err),
      { everyMs: 300, timeoutMs: 300 },
    );
    listener.start();
    await listener.listening;
    const notifier = new pg.Client({ connectionString: cluster.url() });
    await notifier.connect();
    try {
      proxy.strandOpen();
      await waitFor(() => reconnects, (n) => n > 0, { what: 'the listener to replace its connection', timeoutMs: 10_000 });
      await notifier.query(`notify ${notifier.escapeIdentifier(wakeChannel('default', 'q'))}, '0'`);
      await waitFor(() => hints.length, (n) => n > 0, { what: 'a hint on the new connection', timeoutMs: 5_000 });
      expect(hints[0]!.queue).toBe('q');
      // Reported as the database fault it is: a worker logs it in one line, without a stack.
      expect(errors[0]).toBeInstanceOf(DatabaseUnavailableError);
      expect((errors[0] as Error).message).toBe('the LISTEN connection did not answer within 300 ms: replacing it');
      const lines: string[] = [];
      const spy = vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void lines.push(a.map(String).join(' ')));
      try {
        reportWorkerError(new EventEmitter(), 'w1', errors[0], 'wake listener down');
      } finally {
        spy.mockRestore();
      }
      expect(lines).toEqual(['[workhorse] worker w1: wake listener down: the LISTEN connection did not answer within 300 ms: replacing it (database_unavailable)']);
    } finally {
      await notifier.end();
      await listener.close();
    }
  }, 30_000);
});

// A certification tick process: like a warm Lambda container it invokes
// runTick again and again, each invocation with a short deadline, until
// SIGTERM (it finishes the current tick, then exits) or SIGKILL (the killer:
// the tick's leases expire and the next tick's recovery pass returns them).
import pg from 'pg';
import { DatabaseUnavailableError } from '../src/errors.js';
import { runTick } from '../src/tick/runTick.js';
import { certifyApp, CERTIFY_QUEUE } from './certifyApp.js';
import { childPoolSize, readChildConfig } from './childConfig.js';

async function main(): Promise<void> {
  const c = readChildConfig(process.argv);
  const pool = new pg.Pool({ connectionString: c.url, max: childPoolSize(c.executors) });
  pool.on('error', () => undefined);
  let stopping = false;
  const stop = () => {
    stopping = true;
  };
  process.once('SIGTERM', stop);
  // The certification went away: finish the current tick rather than linger as an orphan.
  process.once('disconnect', stop);
  process.send?.({ ready: true });
  try {
    while (!stopping) {
      // Like a Lambda invocation, a tick that cannot reach the database fails
      // fast; the next one tries again.
      await runTick({
        app: certifyApp,
        pool,
        namespace: c.namespace,
        deadline: new Date(Date.now() + c.tickMs),
        heartbeatMs: c.heartbeatMs,
        safetyMarginMs: Math.min(1000, Math.floor(c.tickMs / 4)),
        concurrency: c.executors,
        queues: [CERTIFY_QUEUE],
        untilEmpty: false,
        pollMs: 100,
        scheduleNamespaces: [],
        build: 'certify-tick',
        log: (line, err) => console.error(`[certify tick ${process.pid}] ${line}`, err instanceof Error ? err.message : (err ?? '')),
      }).catch(async (err: unknown) => {
        if (!(err instanceof DatabaseUnavailableError)) throw err;
        console.error(`[certify tick ${process.pid}] ${err.message}`);
        await new Promise((r) => setTimeout(r, 200));
      });
    }
  } finally {
    await pool.end();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(`[certify tick ${process.pid}] fatal:`, err);
    process.exit(1);
  },
);

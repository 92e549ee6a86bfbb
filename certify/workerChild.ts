// A certification worker process: one long-lived Worker running the
// certify job. SIGTERM drains and deregisters; SIGKILL (the killer) leaves
// its leases for the other workers' recovery passes.
import { Client } from '../src/client/client.js';
import { Worker } from '../src/worker/worker.js';
import { certifyApp, CERTIFY_QUEUE } from './certifyApp.js';
import { childPoolSize, readChildConfig } from './childConfig.js';

async function main(): Promise<void> {
  const c = readChildConfig(process.argv);
  const client = new Client({
    connectionString: c.url,
    namespace: c.namespace,
    jobs: certifyApp.jobs,
    poolMax: childPoolSize(c.executors),
  });
  const worker = new Worker(client, {
    queue: CERTIFY_QUEUE,
    concurrency: c.executors,
    prefetch: c.executors,
    heartbeatMs: c.heartbeatMs,
    pollMs: 200,
    build: 'certify',
  });
  certifyApp.configure(worker);
  worker.events.on('error', (err) => console.error(`[certify worker ${process.pid}]`, err instanceof Error ? err.message : err));
  const running = worker.run();
  process.once('SIGTERM', () => void worker.stop());
  // The certification went away: drain rather than linger as an orphan.
  process.once('disconnect', () => void worker.stop());
  while (!worker.runtimeState().registered && worker.runtimeState().running) await new Promise((r) => setTimeout(r, 20));
  process.send?.({ ready: true });
  await running;
  await client.close();
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(`[certify worker ${process.pid}] fatal:`, err);
    process.exit(1);
  },
);

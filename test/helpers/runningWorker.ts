// The setup most worker tests repeat: a fresh database, a client of it with
// the file's job definitions, and one worker running on it, bound by the
// file's `configure`; `stop()` stops the worker, closes the client and
// drops the database (call it from afterAll).
import { createClient, Worker, type Client, type JobDefinition, type WorkerOptions } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from './db.js';

export interface RunningWorker {
  db: TestDatabase;
  client: Client;
  worker: Worker;
  stop(): Promise<void>;
}

export async function startRunningWorker(
  jobs: JobDefinition[],
  options: WorkerOptions,
  configure: (worker: Worker) => void,
): Promise<RunningWorker> {
  const db = await createTestDatabase();
  const client = createClient({ connectionString: db.url, jobs, poolMax: 4 });
  const worker = new Worker(client, options);
  configure(worker);
  const running = worker.run();
  return {
    db,
    client,
    worker,
    async stop() {
      await worker.stop();
      await running;
      await client.close();
      await db.drop();
    },
  };
}

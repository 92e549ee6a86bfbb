// The durable mode's harness side: it sends each parent job its `go`
// signal, in small batches over time, so some arrive before the job's wait
// opens (kept) and some while it waits (delivered), all while workers are
// being killed. A signal whose answer was lost to a database fault and is
// refused as a duplicate on the retry was delivered: it counts as sent.
import type pg from 'pg';
import { Client } from '../src/client/client.js';
import { retryTransient } from '../src/db/retryTransient.js';
import { ConflictError } from '../src/errors.js';
import { certifyApp, CERTIFY_TYPE, GO_SIGNAL } from './certifyApp.js';

const BATCH = 100;
const PAUSE_MS = 20;

export class Signaller {
  sent = 0;
  private stopped = false;
  private running: Promise<void> | undefined;
  private readonly client: Client;

  constructor(
    url: string,
    namespace: string,
    private readonly pool: pg.Pool,
    private readonly total: number,
    private readonly onError: (err: unknown) => void,
  ) {
    this.client = new Client({ connectionString: url, namespace, jobs: certifyApp.jobs, poolMax: 4 });
  }

  start(): void {
    this.running = this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
    await this.client.close();
  }

  private async loop(): Promise<void> {
    let after = '0';
    while (!this.stopped && this.sent < this.total) {
      try {
        const r = await retryTransient(
          () =>
            this.pool.query<{ id: string }>(
              // Ordered by the bigint (an output column named id would sort as text).
              `select j.id::text as id from workhorse.jobs j where j.namespace = $1 and j.type = $2 and j.id > $3::bigint order by j.id limit $4`,
              [this.client.namespace, CERTIFY_TYPE, after, BATCH],
            ),
          { baseMs: 100, maxMs: 1000 },
        );
        for (const { id } of r.rows) {
          await this.send(id);
          after = id;
        }
      } catch (err) {
        this.onError(err);
      }
      await new Promise((r) => setTimeout(r, PAUSE_MS));
    }
  }

  private async send(id: string): Promise<void> {
    for (;;) {
      try {
        await retryTransient(() => this.client.signal(id, GO_SIGNAL, { from: 'harness' }), { baseMs: 100, maxMs: 1000 });
      } catch (err) {
        if (!(err instanceof ConflictError)) {
          this.onError(err);
          if (this.stopped) return;
          await new Promise((r) => setTimeout(r, 200));
          continue;
        }
      }
      this.sent++;
      return;
    }
  }
}

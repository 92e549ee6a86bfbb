// The certification's database faults: every `everyMs`, one fault on the
// cluster the run owns. Two of three terminate every backend of the
// certification database (pg_terminate_backend); every third restarts the
// server (`pg_ctl restart -m fast`). Worker processes must ride them out:
// none may die of a database fault.
import type { OwnCluster } from './ownCluster.js';

export class FaultInjector {
  private timer: NodeJS.Timeout | undefined;
  private busy: Promise<void> | undefined;
  private n = 0;
  restarts = 0;
  terminations = 0;
  backendsTerminated = 0;

  constructor(
    private readonly cluster: OwnCluster,
    private readonly database: string,
    private readonly everyMs: number,
    private readonly log: (line: string) => void,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      if (!this.busy) this.busy = this.inject().finally(() => (this.busy = undefined));
    }, this.everyMs);
  }

  private async inject(): Promise<void> {
    try {
      if (++this.n % 3 === 0) {
        await this.cluster.restart('fast');
        this.restarts++;
      } else {
        this.backendsTerminated += await this.cluster.terminateBackends(this.database);
        this.terminations++;
      }
    } catch (err) {
      this.log(`fault injection failed: ${(err as Error).message}`);
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.busy;
  }
}

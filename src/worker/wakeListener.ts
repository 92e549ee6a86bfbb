// LISTEN for wake hints on one dedicated connection. Enqueue, retry,
// recovery and queue resume NOTIFY `workhorse:<namespace>` with the queue
// name as payload (once per queue per statement); a hint for one of our
// queues wakes the run loop early. Hints carry no truth: the safety poll
// still runs, and a lost connection is re-opened with backoff.
import pg from 'pg';

export class WakeListener {
  private client: pg.Client | undefined;
  private closed = false;
  private retryMs = 250;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly connectionConfig: pg.ClientConfig,
    private readonly namespace: string,
    private readonly queues: ReadonlySet<string>,
    private readonly onWake: () => void,
  ) {}

  get channel(): string {
    return `workhorse:${this.namespace}`;
  }

  async start(): Promise<void> {
    const client = new pg.Client(this.connectionConfig);
    client.on('error', () => this.reconnect(client));
    client.on('end', () => this.reconnect(client));
    client.on('notification', (n) => {
      if (n.channel !== this.channel) return;
      if (!n.payload || n.payload === '*' || this.queues.has(n.payload)) this.onWake();
    });
    await client.connect();
    await client.query(`listen ${client.escapeIdentifier(this.channel)}`);
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.retryMs = 250;
  }

  private reconnect(client: pg.Client): void {
    if (this.closed || this.client !== client) return;
    this.client = undefined;
    client.end().catch(() => undefined);
    this.timer = setTimeout(() => {
      this.start().catch(() => this.scheduleRetry());
    }, this.retryMs);
    this.timer.unref();
    this.retryMs = Math.min(this.retryMs * 2, 10_000);
  }

  private scheduleRetry(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => this.start().catch(() => this.scheduleRetry()), this.retryMs);
    this.timer.unref();
    this.retryMs = Math.min(this.retryMs * 2, 10_000);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const c = this.client;
    this.client = undefined;
    if (c) await c.end().catch(() => undefined);
  }
}

// LISTEN for wake hints on one dedicated connection. Enqueue, retry,
// recovery and queue resume NOTIFY `workhorse:<namespace>` with the queue
// name as payload (once per queue per statement); a hint for one of our
// queues wakes the run loop early. Hints carry no truth: the safety poll
// still runs. A connection that fails to open or dies later is replaced
// with capped backoff, and the loop is woken once it listens again (a hint
// may have been missed meanwhile).
import pg from 'pg';
import { Backoff } from '../db/retryTransient.js';

export class WakeListener {
  private client: pg.Client | undefined;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly backoff = new Backoff({ baseMs: 250, maxMs: 10_000 });
  private opened = 0;

  constructor(
    private readonly connectionConfig: pg.ClientConfig,
    private readonly namespace: string,
    private readonly queues: ReadonlySet<string>,
    private readonly onWake: () => void,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}

  get channel(): string {
    return `workhorse:${this.namespace}`;
  }

  /** Starts listening; a failure is reported and retried, never thrown. */
  start(): void {
    void this.open();
  }

  private async open(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client(this.connectionConfig);
    client.on('error', () => this.replace(client));
    client.on('end', () => this.replace(client));
    client.on('notification', (n) => {
      if (n.channel !== this.channel) return;
      if (!n.payload || n.payload === '*' || this.queues.has(n.payload)) this.onWake();
    });
    try {
      await client.connect();
      await client.query(`listen ${client.escapeIdentifier(this.channel)}`);
    } catch (err) {
      client.end().catch(() => undefined);
      this.onError(err);
      this.retry();
      return;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.backoff.reset();
    if (this.opened++ > 0) this.onWake();
  }

  private replace(client: pg.Client): void {
    if (this.closed || this.client !== client) return;
    this.client = undefined;
    client.end().catch(() => undefined);
    this.retry();
  }

  private retry(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => void this.open(), this.backoff.next());
    this.timer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const c = this.client;
    this.client = undefined;
    if (c) await c.end().catch(() => undefined);
  }
}

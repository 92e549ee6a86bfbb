// LISTEN for wake hints on one dedicated connection: one channel per queue
// of the worker (wakeChannel.ts), so activity on another queue never wakes
// it. Enqueue, recovery, an operator retry, a queue resume and a
// deregister's hand-back NOTIFY the affected queues once per statement,
// with how long until the announced job comes due. Hints carry no truth:
// the safety poll still runs. A connection that fails to open or dies
// later is replaced with capped backoff, and the worker is told once it
// listens again (a hint may have been missed meanwhile). So is one that
// stops answering while its socket stays open (a server that vanished
// without a reset, a frozen path): a LISTEN connection sends nothing of its
// own, so every PROBE_EVERY_MS it asks `select 1`, and one with no answer
// within PROBE_TIMEOUT_MS is dropped and replaced (it was kept for good).
import pg from 'pg';
import type { WakeHint, WakeSubscription } from '../client/wakeHints.js';
import { destroySocket } from '../db/guardedDb.js';
import { Backoff } from '../db/retryTransient.js';
import { DatabaseUnavailableError } from '../errors.js';
import { settledWithin } from '../boundedWait.js';
import { hintDueInMs, wakeChannel } from './wakeChannel.js';

/** How long close() waits for the server to see the connection end before dropping the socket. */
export const LISTENER_END_TIMEOUT_MS = 2000;
/** How often a listening connection is asked whether it still answers, and how long it has to. */
const PROBE_EVERY_MS = 30_000;
const PROBE_TIMEOUT_MS = 5_000;

export interface ListenerProbe {
  everyMs: number;
  timeoutMs: number;
}

/**
 * Ends a client, waiting at most `ms`: pg's end() resolves only once the
 * server closes its side, which a hung server (SIGSTOPped, partitioned)
 * never does. Past the bound the socket is destroyed.
 */
async function endWithin(client: pg.Client, ms: number): Promise<void> {
  if (!(await settledWithin(client.end(), ms))) destroySocket(client);
}

export class WakeListener implements WakeSubscription {
  private client: pg.Client | undefined;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private readonly backoff = new Backoff({ baseMs: 250, maxMs: 10_000 });
  private opened = 0;
  private readonly byChannel: Map<string, string>;
  private markListening!: () => void;
  /**
   * Resolves once the first LISTEN is in place (never, if the listener is
   * closed first): a caller that read the state before then may have missed
   * a hint, and reads again.
   */
  readonly listening = new Promise<void>((resolve) => (this.markListening = resolve));

  constructor(
    private readonly connectionConfig: pg.ClientConfig,
    namespace: string,
    queues: readonly string[],
    private readonly onHint: (hint: WakeHint) => void,
    private readonly onReconnect: () => void,
    private readonly onError: (err: unknown) => void = () => undefined,
    private readonly probe: ListenerProbe = { everyMs: PROBE_EVERY_MS, timeoutMs: PROBE_TIMEOUT_MS },
  ) {
    this.byChannel = new Map(queues.map((q) => [wakeChannel(namespace, q), q]));
  }

  get channels(): string[] {
    return [...this.byChannel.keys()];
  }

  /** Listening right now. */
  get active(): boolean {
    return this.client !== undefined;
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
      const queue = this.byChannel.get(n.channel);
      if (queue !== undefined) this.onHint({ queue, dueInMs: hintDueInMs(n.payload) });
    });
    try {
      await client.connect();
      await client.query(this.channels.map((c) => `listen ${client.escapeIdentifier(c)}`).join('; '));
    } catch (err) {
      client.end().catch(() => undefined);
      this.onError(err);
      this.retry();
      return;
    }
    if (this.closed) {
      await endWithin(client, LISTENER_END_TIMEOUT_MS);
      return;
    }
    this.client = client;
    this.backoff.reset();
    this.armProbe(client);
    if (this.opened++ > 0) this.onReconnect();
    else this.markListening();
  }

  /** Asks `client` to answer every probe interval; one that does not in time is dropped (its 'error' or 'end' replaces it). */
  private armProbe(client: pg.Client): void {
    this.probeTimer = setTimeout(() => {
      if (this.closed || this.client !== client) return;
      void settledWithin(client.query('select 1'), this.probe.timeoutMs).then((answered) => {
        if (this.closed || this.client !== client) return;
        if (answered) return this.armProbe(client);
        // A fault like any other (one log line, no stack): the connection is replaced.
        this.onError(new DatabaseUnavailableError(`the LISTEN connection did not answer within ${this.probe.timeoutMs} ms: replacing it`));
        destroySocket(client);
        this.replace(client);
      });
    }, this.probe.everyMs);
    this.probeTimer.unref();
  }

  private replace(client: pg.Client): void {
    if (this.closed || this.client !== client) return;
    this.client = undefined;
    if (this.probeTimer) clearTimeout(this.probeTimer);
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
    if (this.probeTimer) clearTimeout(this.probeTimer);
    const c = this.client;
    this.client = undefined;
    if (c) await endWithin(c, LISTENER_END_TIMEOUT_MS);
  }
}

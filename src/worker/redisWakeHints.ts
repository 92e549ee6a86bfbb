// The optional Redis wake-up: wake hints over Redis pub/sub beside (or
// instead of) PostgreSQL's LISTEN, for deployments where a LISTEN
// connection is not possible (a transaction pooler) or not wanted. A client
// given these hints publishes one per queue after each enqueue it commits;
// workers of that client subscribe to their queues' channels (the same
// names and payloads as NOTIFY, src/worker/wakeChannel.ts).
//
// Redis carries no truth. Publishing never waits and never throws: while
// Redis is away, hints are dropped (no offline queue), so an outage changes
// nothing but latency: workers fall back to their safety poll and the
// database's next-due answers; so does a Redis that keeps the connection
// but stops answering (at most MAX_UNANSWERED_PUBLISHES wait). Both connections reconnect with capped
// backoff; a subscriber that comes back wakes its worker once (hints may
// have been missed). `redis` (node-redis) is loaded on first use, so code
// that never enables the wake-up never loads it.
//
// The options are checked up front (ConfigError naming the field): a URL
// node-redis cannot use would otherwise fail only at the first connection,
// where failures are swallowed by design.
import * as z from 'zod';
import type { WakeHint, WakeHints, WakeSubscription } from '../client/wakeHints.js';
import { parseConfig } from '../validation.js';
import { redisUrlSchema } from './redisUrl.js';
import { hintDueInMs, wakeChannel } from './wakeChannel.js';

/** The part of a node-redis client this module uses. */
interface RedisClient {
  readonly isReady: boolean;
  on(event: 'error' | 'ready', listener: (err?: unknown) => void): unknown;
  connect(): Promise<unknown>;
  publish(channel: string, message: string): Promise<unknown>;
  subscribe(channels: string[], listener: (message: string, channel: string) => void): Promise<void>;
  destroy(): void;
}

export interface RedisWakeHintsOptions {
  /** redis://[user:password@]host:port[/db] (or rediss:// for TLS). */
  url: string;
  /** How long one connection attempt may take. Default 2 s. */
  connectTimeoutMs?: number;
  /** Told once per outage (not once per reconnect attempt). Default: one log line. */
  onError?: (err: unknown) => void;
}

const optionsSchema = z
  .object({
    url: redisUrlSchema,
    // At most a minute: a timer longer than 2^31 ms fires at once (Node warns, and the first hint was lost).
    connectTimeoutMs: z.number().int().positive().max(60_000).optional(),
    onError: z.custom<(err: unknown) => void>((v) => typeof v === 'function', 'onError must be a function').optional(),
  })
  // A misspelt option (connectTimeout) is refused rather than ignored.
  .strict();

const RECONNECT_MAX_MS = 10_000;

/**
 * Publishes sent and not yet answered, at most. A Redis that holds the
 * connection open but stops answering (a frozen or overloaded server: TCP
 * sees nothing wrong) would otherwise collect every hint in node-redis's
 * command queue for as long as it stays silent; past this many, hints are
 * dropped (reported once) until it answers again.
 */
export const MAX_UNANSWERED_PUBLISHES = 1_000;

function reconnectDelay(retries: number): number {
  return Math.round(Math.min(RECONNECT_MAX_MS, 100 * 2 ** Math.min(retries, 10)) * (0.75 + Math.random() * 0.5));
}

export class RedisWakeHints implements WakeHints {
  private publisher: RedisClient | undefined;
  private opening: Promise<RedisClient> | undefined;
  private readonly subscriptions = new Set<RedisSubscription>();
  private closed = false;
  private unanswered = 0;
  /** Hints waiting for the first connection, and publishes not yet answered: close() lets them go out first. */
  private readonly inFlight = new Set<Promise<unknown>>();
  private droppingReported = false;
  /** The publisher's first connection: hints asked for before it wait for it. */
  private everReady = false;
  private markReady!: () => void;
  private readonly firstReady = new Promise<void>((resolve) => {
    this.markReady = () => {
      this.everReady = true;
      resolve();
    };
  });

  readonly options: RedisWakeHintsOptions;

  /** Throws ConfigError naming the option (`url`, ...) that is not valid. */
  constructor(options: RedisWakeHintsOptions) {
    this.options = parseConfig(optionsSchema, options, 'redis wake hints');
  }

  /**
   * (Internal) a connected-or-reconnecting client that reports each outage
   * once; `onReady` runs at every (re)connection. Once `isClosed()` (its
   * owner closed), it no longer reconnects, and a connection that completes
   * anyway is closed at once: destroy() on a client still connecting left
   * the connection it then made open, and the process never exited.
   */
  async connect(name: string, onReady: (client: RedisClient) => void = () => undefined, isClosed = () => this.closed): Promise<RedisClient> {
    const { createClient } = await import('redis');
    const client: RedisClient = createClient({
      url: this.options.url,
      name,
      disableOfflineQueue: true,
      socket: {
        connectTimeout: this.options.connectTimeoutMs ?? 2_000,
        reconnectStrategy: (retries: number) => (isClosed() ? false : reconnectDelay(retries)),
      },
    }) as unknown as RedisClient;
    let reported = false;
    client.on('error', (err: unknown) => {
      if (reported) return;
      reported = true;
      this.report(name, err);
    });
    client.on('ready', () => {
      if (isClosed()) return destroyQuietly(client);
      reported = false;
      onReady(client);
    });
    // The first attempt may fail; the reconnect strategy keeps trying.
    client.connect().catch(() => undefined);
    return client;
  }

  publish(namespace: string, hints: WakeHint[]): void {
    if (this.closed || hints.length === 0) return;
    const p = this.publisher;
    if (p?.isReady) {
      for (const h of hints) this.send(p, wakeChannel(namespace, h.queue), String(Math.max(0, Math.ceil(h.dueInMs))));
      return;
    }
    // Until the first connection is up, hints wait for it (at most one
    // connect timeout); during an outage afterwards they are dropped.
    if (this.everReady) return;
    this.opening ??= this.connect('workhorse-wake-publisher', () => this.markReady()).then((c) => (this.publisher = c));
    const giveUp = new Promise<void>((resolve) => setTimeout(resolve, this.options.connectTimeoutMs ?? 2_000).unref());
    const asked = Date.now();
    this.track(
      Promise.race([this.firstReady, giveUp]).then(() => {
        // The due times were relative to when they were asked for.
        const waited = Date.now() - asked;
        if (this.publisher?.isReady) this.publish(namespace, hints.map((h) => ({ ...h, dueInMs: Math.max(0, h.dueInMs - waited) })));
      }),
    );
  }

  /** (Internal) publishes sent that Redis has not answered yet (bounded by MAX_UNANSWERED_PUBLISHES). */
  get unansweredPublishes(): number {
    return this.unanswered;
  }

  private send(p: RedisClient, channel: string, message: string): void {
    if (this.unanswered >= MAX_UNANSWERED_PUBLISHES) {
      if (!this.droppingReported) {
        this.droppingReported = true;
        this.report('workhorse-wake-publisher', new Error(`${MAX_UNANSWERED_PUBLISHES} publishes unanswered: Redis holds the connection but does not answer; hints are dropped until it does`));
      }
      return;
    }
    this.unanswered++;
    this.track(
      p.publish(channel, message).then(
        () => {
          this.unanswered--;
          this.droppingReported = false;
        },
        () => this.unanswered--,
      ),
    );
  }

  private track(p: Promise<unknown>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  private report(name: string, err: unknown): void {
    (this.options.onError ?? ((e: unknown) => console.error(`[workhorse] redis wake-up (${name}) unavailable; polling covers it:`, String(e))))(err);
  }

  subscribe(namespace: string, queues: string[], onHint: (hint: WakeHint) => void, onReconnect: () => void): WakeSubscription {
    const sub = new RedisSubscription(this, namespace, queues, onHint, onReconnect, () => this.subscriptions.delete(sub));
    this.subscriptions.add(sub);
    return sub;
  }

  async close(): Promise<void> {
    // Hints already asked for go out first, for at most one connect timeout:
    // a script that enqueues and closes at once lost its hint, and its job
    // waited for a worker's poll.
    const until = Date.now() + (this.options.connectTimeoutMs ?? 2_000);
    while (this.inFlight.size > 0 && !this.closed && Date.now() < until) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...this.inFlight]), new Promise((r) => (timer = setTimeout(r, until - Date.now())))]);
      clearTimeout(timer);
    }
    this.closed = true;
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    const p = this.publisher ?? (await this.opening?.catch(() => undefined));
    this.publisher = undefined;
    if (p) destroyQuietly(p);
  }
}

/** Closes a client whatever state it is in (destroy() throws on one already closed). */
function destroyQuietly(client: RedisClient): void {
  try {
    client.destroy();
  } catch {
    // already closed
  }
}

class RedisSubscription implements WakeSubscription {
  private client: RedisClient | undefined;
  private closed = false;
  private subscribed = false;
  private readies = 0;

  constructor(
    hints: RedisWakeHints,
    namespace: string,
    queues: string[],
    onHint: (hint: WakeHint) => void,
    onReconnect: () => void,
    private readonly forget: () => void,
  ) {
    const byChannel = new Map(queues.map((q) => [wakeChannel(namespace, q), q]));
    const onReady = (client: RedisClient) => {
      if (this.closed) return;
      if (this.readies++ > 0) onReconnect();
      // Once subscribed, node-redis subscribes again by itself after a reconnect.
      if (this.subscribed) return;
      client
        .subscribe([...byChannel.keys()], (message, channel) => {
          const queue = byChannel.get(channel);
          if (queue !== undefined) onHint({ queue, dueInMs: hintDueInMs(message) });
        })
        .then(() => (this.subscribed = true))
        .catch(() => undefined);
    };
    void hints
      .connect('workhorse-wake-subscriber', onReady, () => this.closed)
      .then((client) => {
        if (this.closed) destroyQuietly(client);
        else this.client = client;
      })
      .catch(() => undefined);
  }

  get active(): boolean {
    return this.subscribed && Boolean(this.client?.isReady);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.forget();
    const c = this.client;
    this.client = undefined;
    if (c) destroyQuietly(c);
  }
}

/**
 * Wake hints over Redis pub/sub: give them to createClient({ wakeHints }) (or
 * createWorkhorseAdapter({ redisUrl })). Throws ConfigError for options that
 * are not valid (a `url` that is not redis:// or rediss://, ...).
 */
export function redisWakeHints(options: RedisWakeHintsOptions): RedisWakeHints {
  return new RedisWakeHints(options);
}

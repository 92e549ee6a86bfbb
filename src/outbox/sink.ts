// What a sink is: something that delivers one outbox event somewhere
// (a webhook, a Lambda function, an EventBridge bus) or throws. A sink may
// name the topics it takes; an event no sink takes counts as delivered.
// Delivery is at least once: a sink sees an event again after a failure (of
// any sink) or a deliverer crash, with the same `id`, so it deduplicates by it.

/** An event as it is handed to a sink (and, as JSON, sent by the HTTP and AWS sinks). */
export interface OutboxEvent {
  /** The event's stable id: the same on every delivery attempt. */
  id: string;
  namespace: string;
  topic: string;
  key: string | null;
  payload: unknown;
  /** When it was published (ISO 8601, database clock). */
  publishedAt: string;
  /** 1 on the first delivery, then one more per retry. */
  attempt: number;
}

export interface Sink {
  /** For errors and logs: "webhook https://…", "lambda my-fn", … */
  readonly name: string;
  /** Topics this sink takes: exact names, or a prefix ending in "*". Absent: every topic. */
  readonly topics?: readonly string[];
  /** Resolves once the event is accepted; throws (or rejects) to have it retried. */
  deliver(event: OutboxEvent, signal: AbortSignal): Promise<void>;
}

export function isSink(v: unknown): v is Sink {
  return typeof v === 'object' && v !== null && typeof (v as Sink).deliver === 'function' && typeof (v as Sink).name === 'string';
}

export function sinkTakes(sink: Sink, topic: string): boolean {
  if (!sink.topics) return true;
  return sink.topics.some((t) => (t.endsWith('*') ? topic.startsWith(t.slice(0, -1)) : t === topic));
}

/** The event's JSON body, as the HTTP and AWS sinks send it. */
export function eventBody(e: OutboxEvent): string {
  return JSON.stringify({ id: e.id, namespace: e.namespace, topic: e.topic, key: e.key, payload: e.payload, publishedAt: e.publishedAt, attempt: e.attempt });
}

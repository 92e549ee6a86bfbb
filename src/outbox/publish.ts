// client.publish: validates an event and writes it through publish_v1 on
// the caller's transaction (`tx`) or the client's pool. Inside a
// transaction the event exists if and only if that transaction commits,
// and the deliverers are woken at its commit (NOTIFY is transactional).
import * as z from 'zod';
import { encodePayload, refuseUndefined } from '../client/enqueueInput.js';
import { checkedTx, txRefusal } from '../client/txRefusal.js';
import type { Protocol, Queryable } from '../db/protocol.js';
import { storableName } from '../names.js';
import { parseInput } from '../validation.js';

export const topicSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.:/-]{1,200}$/, 'a topic is 1-200 characters of letters, digits, "_", ".", ":", "/" or "-"');

const publishOptionsSchema = z
  .object({
    /** A pg client inside the caller's open transaction. */
    tx: z.custom<Queryable>((v) => typeof v === 'object' && v !== null && typeof (v as Queryable).query === 'function', 'tx must be a pg client').optional(),
    /** Events with the same key are delivered in publication order; at most 500 bytes of UTF-8, as publish_v1 stores it. */
    key: storableName(500)
      .refine((k) => Buffer.byteLength(k, 'utf8') <= 500, 'a key is at most 500 bytes of UTF-8')
      .optional(),
    /** Deliver no earlier than this many ms after publication. */
    delayMs: z.number().int().min(0).max(366 * 86_400_000).optional(),
  })
  .strict();

export type PublishOptions = z.input<typeof publishOptionsSchema>;

export interface PublishResult {
  /** The event's id: the sinks see it as the event id on every delivery. */
  id: string;
}

export async function publishEvent(
  protocol: Protocol,
  pool: Queryable,
  namespace: string,
  maxPayloadBytes: number,
  topic: string,
  payload: unknown,
  options: PublishOptions = {},
  /** The client's schema check, run on `tx` when one is given (a call in it never waits for a pool connection). */
  ready: (tx: Queryable | undefined) => Promise<void> = () => Promise.resolve(),
): Promise<PublishResult> {
  const t = parseInput(topicSchema, topic, 'topic');
  const o = parseInput(publishOptionsSchema, options, 'publish options');
  refuseUndefined(`payload for topic "${t}"`, payload, false);
  const json = encodePayload(`topic "${t}"`, payload, maxPayloadBytes);
  const tx = o.tx ? checkedTx(o.tx, 'publish') : undefined;
  const inTx = (err: unknown) => {
    throw tx ? txRefusal(err, 'publish') : err;
  };
  await ready(tx).catch(inTx);
  const id = tx
    ? await protocol.publish(tx, namespace, t, o.key ?? null, json, o.delayMs ?? 0).catch(inTx)
    : await protocol.publish(pool, namespace, t, o.key ?? null, json, o.delayMs ?? 0);
  return { id };
}

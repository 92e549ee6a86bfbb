// The name of a queue's wake channel and the meaning of a wake hint, the
// same for PostgreSQL NOTIFY and for the optional Redis wake-up. Mirrors
// workhorse.wake_channel_v1 (sql/protocol/wake.sql): `workhorse:<namespace>:
// <queue>` when that fits PostgreSQL's 63-byte identifier limit, otherwise
// `workhorse#` and the hex md5 of `<namespace>:<queue>`. A hint's payload
// is the number of milliseconds until the earliest job it announces comes
// due; "0" (or anything that is not a number, for older senders) means now.
import { createHash } from 'node:crypto';

/** PostgreSQL truncates identifiers (channel names too) past this many bytes. */
export const MAX_CHANNEL_BYTES = 63;

export function wakeChannel(namespace: string, queue: string): string {
  const plain = `workhorse:${namespace}:${queue}`;
  if (Buffer.byteLength(plain) <= MAX_CHANNEL_BYTES) return plain;
  return `workhorse#${createHash('md5').update(`${namespace}:${queue}`).digest('hex')}`;
}

/** Milliseconds until the announced job comes due (0: now). */
export function hintDueInMs(payload: string | undefined): number {
  const n = Number(payload);
  return payload && Number.isFinite(n) && n > 0 ? Math.ceil(n) : 0;
}


// The webhook sink: POSTs each event as JSON to a URL, signed with the
// project's request-signing scheme (src/signing: x-workhorse-timestamp and
// x-workhorse-signature over the method, path and body), with the event's
// stable id in x-workhorse-event-id so the receiver can drop repeats. A
// response outside 2xx, a network error or the timeout is a failed delivery.
// Redirects are not followed: a 301, 302 or 303 would have fetch send a
// bodiless GET that a 200 then counts as delivered, and a 307 or 308 would
// resend the event to a URL the signature was not made for. Only the start
// of the receiver's answer is read (a failure quotes it); the rest is
// cancelled, so a huge or endless body costs the worker nothing. An answer
// with a Retry-After header (a 429 or 503 asking for quiet) says how long
// the event's next try waits at least (retryAfter.ts).
import * as z from 'zod';
import { secretSchema } from '../credentials/tokens.js';
import { signRequest } from '../signing/sign.js';
import { parseConfig } from '../validation.js';
import { discardBody, readBodyPrefix } from './responsePrefix.js';
import { parseRetryAfter, SinkRetryAfterError } from './retryAfter.js';
import { eventBody, type Sink } from './sink.js';
import { headersSchema, sinkTopicsSchema, webhookUrlSchema } from './sinkOptions.js';

export const EVENT_ID_HEADER = 'x-workhorse-event-id';
export const EVENT_TOPIC_HEADER = 'x-workhorse-topic';

const webhookSchema = z
  .object({
    url: webhookUrlSchema,
    /** The shared signing secret, at least 16 characters as WORKHORSE_SIGNING_SECRET; the receiver verifies with verifySignedRequest. */
    secret: secretSchema,
    topics: sinkTopicsSchema.optional(),
    /** A delivery that has not answered by then fails. */
    timeoutMs: z.number().int().min(100).max(300_000).default(10_000),
    /** Extra request headers (e.g. an API key of the receiver). */
    headers: headersSchema.default({}),
  })
  .strict();

export type WebhookSinkOptions = z.input<typeof webhookSchema>;

export function webhookSink(options: WebhookSinkOptions): Sink {
  const o = parseConfig(webhookSchema, options, 'webhookSink options');
  const url = new URL(o.url);
  const path = url.pathname + url.search;
  return {
    name: `webhook ${url.origin}${url.pathname}`,
    ...(o.topics ? { topics: o.topics } : {}),
    async deliver(event, signal) {
      const body = eventBody(event);
      const signature = await signRequest({ secret: o.secret, method: 'POST', path, body });
      const timeout = AbortSignal.timeout(o.timeoutMs);
      const res = await fetch(url, {
        method: 'POST',
        headers: { ...o.headers, 'content-type': 'application/json', [EVENT_ID_HEADER]: event.id, [EVENT_TOPIC_HEADER]: event.topic, ...signature },
        body,
        signal: AbortSignal.any([signal, timeout]),
        redirect: 'manual',
      }).catch((err: unknown) => {
        // Its own time limit, said with the limit (the pass's own end is the pass's to say).
        if (timeout.aborted && !signal.aborted) throw new Error(`no answer within ${o.timeoutMs} ms (the sink's timeoutMs)`);
        throw err;
      });
      if (res.ok) return discardBody(res);
      if (res.status >= 300 && res.status < 400) {
        await discardBody(res);
        const to = res.headers.get('location');
        throw new Error(`webhook answered ${res.status}${to ? ` (to ${to.slice(0, 200)})` : ''}: redirects are not followed; set the sink's url to where it should deliver`);
      }
      const text = await readBodyPrefix(res);
      const answer = `webhook answered ${res.status}${text ? `: ${text.slice(0, 200)}` : ''}`;
      const afterMs = parseRetryAfter(res.headers.get('retry-after'));
      if (afterMs !== undefined) throw new SinkRetryAfterError(`${answer} (Retry-After: ${afterMs / 1000} s)`, afterMs);
      throw new Error(answer);
    },
  };
}

// Option schemas the sinks share: the topics a sink takes (exact topics, or
// a prefix ending in "*", checked against the topic grammar so a pattern
// that can never match is refused when the sink is built; custom sinks are
// held to it too, in outboxOptions.ts), a webhook URL (http(s), without
// credentials, not on a port fetch blocks) and its extra headers. What fetch
// would refuse at every delivery, turning each event dead, is refused up
// front instead: header names it will not send (transfer-encoding, expect,
// ...), a connection header other than close or keep-alive, a host header
// (fetch drops it), values that are not Latin-1, and the headers the sink
// sets itself.
import * as z from 'zod';

const TOPIC_PATTERN = /^(?:[A-Za-z0-9_.:/-]{1,200}|[A-Za-z0-9_.:/-]{0,199}\*)$/;

export const sinkTopicsSchema = z
  .array(z.string().regex(TOPIC_PATTERN, 'a topic is 1-200 characters of letters, digits, "_", ".", ":", "/" or "-", or such a prefix ending in "*"'))
  .min(1);

/** Whether `u` parses as an http(s) URL. */
export function isHttpUrl(u: string): boolean {
  try {
    return /^https?:$/.test(new URL(u).protocol);
  } catch {
    return false;
  }
}

/**
 * The ports fetch refuses to connect to (the Fetch standard's "bad port"
 * list): a webhook on one fails every delivery with "bad port".
 */
const FETCH_BAD_PORTS = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115,
  117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587,
  601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669,
  6679, 6697, 10080,
]);

/** Not a bad port, and not port 0 (no server listens there: every connection is refused). */
function allowedPort(u: string): boolean {
  const port = new URL(u).port;
  return port === '' || (port !== '0' && !FETCH_BAD_PORTS.has(Number(port)));
}

/** fetch refuses a URL with a user or password in it, so every delivery to one would fail. */
function withoutCredentials(u: string): boolean {
  const url = new URL(u);
  return url.username === '' && url.password === '';
}

export const webhookUrlSchema = z
  .string()
  .refine(isHttpUrl, 'url must be an http(s) URL')
  .refine(
    (u) => !isHttpUrl(u) || withoutCredentials(u),
    'url must not carry credentials (user:password@): fetch refuses such a URL, so every delivery would fail; send them in headers (e.g. authorization)',
  )
  .refine((u) => !isHttpUrl(u) || allowedPort(u), 'url is on a port fetch refuses to connect to (its "bad ports", such as 25 or 6000, or port 0), so every delivery would fail');

/** Headers fetch will not send as given: every delivery with one fails. */
const UNSENDABLE = new Set(['content-length', 'expect', 'keep-alive', 'transfer-encoding', 'upgrade']);

/** What the sink itself sets on each request. */
function setBySink(name: string): boolean {
  return name === 'content-type' || name.startsWith('x-workhorse-');
}

/**
 * RFC 9110 field names (tokens) and values of Latin-1 text without control
 * characters but tab (fetch sends only byte strings); not a header fetch
 * will not send, nor one the sink sets itself.
 */
export const headersSchema = z
  .record(
    z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'a header name is a token (letters, digits and !#$%&\'*+.^_`|~-)'),
    z
      .string()
      .regex(/^[\t\u0020-\u007e\u0080-\u00ff]*$/, 'a header value is Latin-1 text without control characters (CR, LF, NUL, ...): fetch sends no other'),
  )
  .superRefine((headers, ctx) => {
    for (const name of Object.keys(headers)) {
      const lower = name.toLowerCase();
      if (lower === 'connection' && !/^(close|keep-alive)$/i.test(headers[name]!.trim())) {
        ctx.addIssue({ code: 'custom', path: [name], message: 'fetch sends a connection header only as close or keep-alive: any other value fails every delivery' });
      } else if (lower === 'host') {
        ctx.addIssue({ code: 'custom', path: [name], message: 'fetch sets host from the url and drops one given by hand: put the host in the url' });
      } else if (UNSENDABLE.has(lower)) {
        ctx.addIssue({ code: 'custom', path: [name], message: `fetch will not send a ${lower} header given by hand: every delivery would fail` });
      } else if (setBySink(lower)) {
        const why = lower === 'content-type' ? 'the webhook sink sets content-type itself' : 'the webhook sink reserves the x-workhorse-* headers (its signature, timestamp and event id)';
        ctx.addIssue({ code: 'custom', path: [name], message: why });
      }
    }
  });

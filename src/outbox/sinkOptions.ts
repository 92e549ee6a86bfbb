// Option schemas the sinks share: the topics a sink takes (exact topics, or
// a prefix ending in "*", checked against the topic grammar so a pattern
// that can never match is refused when the sink is built), a webhook URL
// (http(s), without credentials fetch would refuse) and its extra headers (names and values fetch would refuse at every
// delivery, turning each event dead, are refused up front instead).
import * as z from 'zod';

const TOPIC_PATTERN = /^(?:[A-Za-z0-9_.:/-]{1,200}|[A-Za-z0-9_.:/-]{0,199}\*)$/;

export const sinkTopicsSchema = z
  .array(z.string().regex(TOPIC_PATTERN, 'a topic is 1-200 characters of letters, digits, "_", ".", ":", "/" or "-", or such a prefix ending in "*"'))
  .min(1);

function httpUrl(u: string): boolean {
  try {
    return /^https?:$/.test(new URL(u).protocol);
  } catch {
    return false;
  }
}

/** fetch refuses a URL with a user or password in it, so every delivery to one would fail. */
function withoutCredentials(u: string): boolean {
  const url = new URL(u);
  return url.username === '' && url.password === '';
}

export const webhookUrlSchema = z
  .string()
  .refine(httpUrl, 'url must be an http(s) URL')
  .refine(
    (u) => !httpUrl(u) || withoutCredentials(u),
    'url must not carry credentials (user:password@): fetch refuses such a URL, so every delivery would fail; send them in headers (e.g. authorization)',
  );

/** RFC 9110 field names (tokens) and values without control characters but tab. */
export const headersSchema = z.record(
  z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'a header name is a token (letters, digits and !#$%&\'*+.^_`|~-)'),
  z.string().regex(/^[^\u0000-\u0008\u000a-\u001f\u007f]*$/, 'a header value must not contain control characters (CR, LF, NUL, ...)'),
);

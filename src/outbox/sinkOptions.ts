// Option schemas the sinks share: the topics a sink takes (exact topics, or
// a prefix ending in "*", checked against the topic grammar so a pattern
// that can never match is refused when the sink is built), a webhook URL
// and its extra headers (names and values fetch would refuse at every
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

export const webhookUrlSchema = z.string().refine(httpUrl, 'url must be an http(s) URL');

/** RFC 9110 field names (tokens) and values without control characters but tab. */
export const headersSchema = z.record(
  z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'a header name is a token (letters, digits and !#$%&\'*+.^_`|~-)'),
  z.string().regex(/^[^\u0000-\u0008\u000a-\u001f\u007f]*$/, 'a header value must not contain control characters (CR, LF, NUL, ...)'),
);

// What a Redis URL may be, checked where it enters (redisWakeHints, the
// worker adapter's redisUrl): redis:// or rediss:// with a host, an optional
// port and an optional numeric database. node-redis only parses the URL when
// it first connects, and the wake-up connects lazily and swallows connection
// failures (Redis carries no truth), so a typo there used to surface late,
// as an obscure TypeError, or not at all: the hints silently never flowed.
import * as z from 'zod';

export const REDIS_URL_MESSAGE = 'not a Redis URL: expected redis://[user:password@]host[:port][/db] or rediss://…';

/** A URL node-redis can connect to: redis: or rediss:, a host, and a path that is empty or a database number. */
export function isRedisUrl(s: string): boolean {
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    return false;
  }
  return ['redis:', 'rediss:'].includes(u.protocol) && u.hostname !== '' && /^(?:\/\d*)?$/.test(u.pathname);
}

export const redisUrlSchema = z.string().refine(isRedisUrl, REDIS_URL_MESSAGE);

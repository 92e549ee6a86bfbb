// The dashboard's session settings as config takes them
// (WORKHORSE_SESSION_SECRET and WORKHORSE_SESSION_TTL_MS, or createApp's
// `sessionSecret` and `sessionTtlMs`). The secret signs every session
// cookie and derives every CSRF token, so it is long and random, e.g.
// `openssl rand -hex 32`.
import * as z from 'zod';

export const sessionSecretSchema = z.string().min(32, 'a session secret must be at least 32 characters (e.g. `openssl rand -hex 32`)');

/** 8 hours. */
export const DEFAULT_SESSION_TTL_MS = 8 * 60 * 60 * 1000;

/** From a minute to a week. */
export const sessionTtlMsSchema = z.number().int().min(60_000).max(7 * 24 * 60 * 60 * 1000);

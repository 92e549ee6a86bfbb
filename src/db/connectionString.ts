// What a connection string may be: a postgres:// or postgresql:// URL (what
// DATABASE_URL holds), or one of the driver's Unix-socket forms
// (`socket:/run/postgresql?db=app`, `/run/postgresql app`). Anything else
// (a typo, `mysql://...`, a port over 65535) would reach the driver as a
// host name and fail only at the first query, with a DNS error or a
// TypeError that does not say what is wrong. An empty one (`DATABASE_URL=`
// in an env file) is told so, once.
import * as z from 'zod';

export const POSTGRES_URL_MESSAGE = 'not a valid PostgreSQL URL: expected postgres://user:password@host:port/database';

/** A URL with the postgres: or postgresql: scheme that the WHATWG parser accepts. */
export function isPostgresUrl(s: string): boolean {
  try {
    return ['postgres:', 'postgresql:'].includes(new URL(s).protocol);
  } catch {
    return false;
  }
}

function isSocketForm(s: string): boolean {
  if (s.startsWith('/')) return true;
  try {
    return new URL(s).protocol === 'socket:';
  } catch {
    return false;
  }
}

/** createClient's and the tick's `connectionString`. */
export const connectionStringSchema = z
  .string()
  .min(1, 'connectionString is empty (is DATABASE_URL set to nothing?)')
  .refine((s) => s === '' || isPostgresUrl(s) || isSocketForm(s), `${POSTGRES_URL_MESSAGE} (or a Unix socket: socket:/dir?db=name)`);

// What a connection string may be: a postgres:// or postgresql:// URL (what
// DATABASE_URL holds), or one of the driver's Unix-socket forms
// (`socket:/run/postgresql?db=app`, `/run/postgresql app`,
// `postgres://user@/app?host=/run/postgresql`). Anything else
// (a typo, `mysql://...`, a port over 65535) would reach the driver as a
// host name and fail only at the first query, with a DNS error or a
// TypeError that does not say what is wrong. An empty one (`DATABASE_URL=`
// in an env file) is told so, once. An `sslmode` the driver does not know
// (a typo such as `sslmode=requried`) is refused by name: the driver would
// turn SSL on for it and fail with "The server does not support SSL
// connections" or a certificate error; so is a certificate or key file
// (`sslcert`, `sslkey`, `sslrootcert`) that cannot be read, which the driver
// met only at the first connect, as a bare ENOENT; and so is `replication`
// (a walsender session runs no statement with parameters: the API's calls
// all failed while /healthz said 200). Spaces and newlines around it (an
// env file's quotes, a secret file's last line) are trimmed: the URL parser
// ignores them, but the driver read " postgres://..." as a socket path and
// connected to a host named "base".
import { accessSync, constants, statSync } from 'node:fs';
import * as z from 'zod';

export const POSTGRES_URL_MESSAGE = 'not a valid PostgreSQL URL: expected postgres://user:password@host:port/database';

/** A URL with the postgres: or postgresql: scheme that the WHATWG parser accepts, or libpq's socket form with a user. */
export function isPostgresUrl(s: string): boolean {
  const u = parsedUrl(s);
  return u !== undefined && ['postgres:', 'postgresql:'].includes(u.protocol);
}

/**
 * The URL as the WHATWG parser reads it; `postgres://user@/db?host=/dir`
 * (a user and no host, the socket directory in `host=`), which libpq and
 * the driver take and the parser refuses, is read with a stand-in host.
 */
function parsedUrl(s: string): URL | undefined {
  try {
    return new URL(s);
  } catch {
    const m = /^(postgres(?:ql)?:\/\/[^@/?#]+@)(\/.*)$/.exec(s);
    if (!m) return undefined;
    try {
      const u = new URL(`${m[1]}socket${m[2]}`);
      return u.searchParams.get('host')?.startsWith('/') === true ? u : undefined;
    } catch {
      return undefined;
    }
  }
}

/** `/dir db` or `socket:/dir?db=name`: a socket form names its directory (a bare `socket:` names none). */
function isSocketForm(s: string): boolean {
  if (s.startsWith('/')) return true;
  try {
    const u = new URL(s);
    return u.protocol === 'socket:' && u.pathname.startsWith('/') && u.pathname.length > 1;
  } catch {
    return false;
  }
}

/** The sslmode values the driver (pg-connection-string) and libpq understand. */
const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify'];

/** What is wrong with the URL's sslmode (one the driver does not know), or undefined. */
function sslModeProblem(s: string): string | undefined {
  const mode = parsedUrl(s)?.searchParams.get('sslmode') ?? null;
  return mode !== null && !SSL_MODES.includes(mode) ? `sslmode "${mode}" is not one of ${SSL_MODES.join(', ')}` : undefined;
}

/** The URL's certificate and key files (sslcert, sslkey, sslrootcert) that cannot be read: the driver reads them at each connect. */
function sslFileProblems(s: string): string[] {
  const params = parsedUrl(s)?.searchParams;
  if (!params) return [];
  return ['sslcert', 'sslkey', 'sslrootcert'].flatMap((name) => {
    const path = params.get(name);
    if (path === null || path === '') return [];
    try {
      accessSync(path, constants.R_OK);
      // Readable, but a directory is no certificate (the driver failed with EISDIR at each connect).
      return statSync(path).isFile() ? [] : [`${name} "${path}" is not a file (a certificate or key file in PEM form)`];
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      return [`${name} "${path}" cannot be read${typeof code === 'string' ? ` (${code})` : ''}`];
    }
  });
}

/**
 * Whether `value` asks for an ordinary session: empty, `0`, or false, no
 * or off as PostgreSQL reads a boolean (a unique prefix: `f`, `n`, `of`).
 */
function notReplication(value: string): boolean {
  const v = value.trim().toLowerCase();
  return v === '' || v === '0' || 'false'.startsWith(v) || 'no'.startsWith(v) || (v.length >= 2 && 'off'.startsWith(v));
}

/** A `replication` setting that makes the session a walsender, which runs no statement with parameters, or undefined. */
function replicationProblem(s: string): string | undefined {
  const value = parsedUrl(s)?.searchParams.get('replication') ?? null;
  if (value === null || notReplication(value)) return undefined;
  return `replication=${value} opens a replication (walsender) session, which cannot run workhorse's statements: remove it`;
}

/**
 * Adds the issues of the URL's settings (an unknown sslmode, a certificate
 * file that cannot be read, a replication session) to a string schema's refinement.
 */
export function refuseBadConnectionSettings(s: string, ctx: z.RefinementCtx): void {
  for (const problem of [sslModeProblem(s), ...sslFileProblems(s), replicationProblem(s)]) if (problem) ctx.addIssue({ code: 'custom', message: problem });
}

/** createClient's and the tick's `connectionString`, trimmed (see the header). */
export const connectionStringSchema = z
  .string()
  .trim()
  .min(1, 'connectionString is empty (is DATABASE_URL set to nothing?)')
  .refine((s) => s === '' || isPostgresUrl(s) || isSocketForm(s), `${POSTGRES_URL_MESSAGE} (or a Unix socket: socket:/dir?db=name)`)
  .superRefine(refuseBadConnectionSettings);

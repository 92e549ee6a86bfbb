// Authentication. POST /tick accepts only the HMAC signature (so a leaked API
// token cannot burn compute); the API routes accept either a bearer token or
// the same signature. A route with no credential configured for it refuses
// everything (fail closed). Failures throw UnauthorizedError (401) before any
// handler runs.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { UnauthorizedError } from '../../errors.js';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../../signing/scheme.js';
import { verifySignedRequest, type VerifyFailure } from '../../signing/verify.js';
import type { HttpEnv } from '../env.js';

export interface AuthSettings {
  /** Current secret first, then the next one during a rotation. */
  signingSecrets: readonly string[];
  apiToken: string | undefined;
  toleranceSec: number;
  now: () => number;
}

function failureMessage(reason: VerifyFailure, toleranceSec: number): string {
  switch (reason) {
    case 'no_secret':
      return 'request signing is not configured on this server';
    case 'unsigned':
      return `missing ${TIMESTAMP_HEADER} or ${SIGNATURE_HEADER} header`;
    case 'malformed':
      return `malformed signature headers: expected ${TIMESTAMP_HEADER}: <unix seconds> and ${SIGNATURE_HEADER}: v1=<64 hex digits>`;
    case 'stale':
      return `request timestamp is outside the ${toleranceSec} s tolerance`;
    case 'mismatch':
      return 'signature does not match';
  }
}

/** The request target as signed: path plus query string. */
function signedPath(c: Context): string {
  const url = new URL(c.req.url);
  return url.pathname + url.search;
}

async function checkSignature(c: Context<HttpEnv>, auth: AuthSettings): Promise<void> {
  const result = await verifySignedRequest({
    secrets: auth.signingSecrets,
    method: c.req.method,
    path: signedPath(c),
    body: c.get('rawBody'),
    timestampHeader: c.req.header(TIMESTAMP_HEADER),
    signatureHeader: c.req.header(SIGNATURE_HEADER),
    toleranceSec: auth.toleranceSec,
    nowMs: auth.now(),
  });
  if (!result.ok) throw new UnauthorizedError(failureMessage(result.reason, auth.toleranceSec));
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}

function checkBearer(header: string, token: string | undefined): void {
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (!m) throw new UnauthorizedError('malformed Authorization header: expected "Bearer <token>"');
  if (!token) throw new UnauthorizedError('bearer tokens are not configured on this server');
  // Hashing first makes the compare constant-time whatever the lengths.
  if (!timingSafeEqual(digest(m[1]!), digest(token))) throw new UnauthorizedError('invalid bearer token');
}

/** For POST /tick: a valid HMAC signature or nothing. */
export function requireSignature(auth: AuthSettings): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    await checkSignature(c, auth);
    await next();
  };
}

/** For the API routes: `Authorization: Bearer <token>` or an HMAC signature. */
export function requireApiAuth(auth: AuthSettings): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    const authorization = c.req.header('authorization');
    if (authorization !== undefined) checkBearer(authorization, auth.apiToken);
    else if (c.req.header(SIGNATURE_HEADER) !== undefined || c.req.header(TIMESTAMP_HEADER) !== undefined) await checkSignature(c, auth);
    else throw new UnauthorizedError(`missing credentials: send "Authorization: Bearer <token>" or sign the request (${SIGNATURE_HEADER})`);
    await next();
  };
}

// Authentication and scopes. Every API route is guarded by the one scope it
// needs: `Authorization: Bearer <token>` is checked from the headers alone,
// before any body byte is read, and a token without the scope gets 403. A
// signed request (the tick's HMAC) is accepted on POST /tick always and on
// the API routes only when the server gives signatures scopes
// (`signedScopes`); its scope, timestamp and header form are checked before
// the body is read, its MAC after. Until its MAC is checked a signed request
// is anyone's, so its body is read in slots of its own (`Bodies.signed`):
// forged signatures with bodies that never arrive can hold those, never the
// ones bearer-authenticated requests use. A route with no credential configured for it refuses everything
// (fail closed). Failures throw UnauthorizedError (401) or ForbiddenError
// (403) before any handler runs.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { ForbiddenError, UnauthorizedError } from '../../errors.js';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../../signing/scheme.js';
import { signedHeadersFailure, verifySignedRequest, type VerifyFailure } from '../../signing/verify.js';
import type { BodyReader } from '../bodyReader.js';
import { pathParams } from '../pathParams.js';
import type { ApiToken } from '../../credentials/tokens.js';
import type { HttpEnv, Principal } from '../env.js';
import type { Scope } from '../../credentials/scopes.js';

export interface AuthSettings {
  /** Current secret first, then the next one during a rotation. */
  signingSecrets: readonly string[];
  tokens: readonly ApiToken[];
  /** Scopes a valid signature carries on the API routes; empty: POST /tick only. */
  signedScopes: readonly Scope[];
  toleranceSec: number;
  now: () => number;
}

/** Where bodies are read: a bearer-authenticated request's, and a signed one's before its MAC is checked. */
export interface Bodies {
  verified: BodyReader;
  signed: BodyReader;
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

async function checkSignature(c: Context<HttpEnv>, auth: AuthSettings): Promise<void> {
  const url = new URL(c.req.url);
  const result = await verifySignedRequest({
    secrets: auth.signingSecrets,
    method: c.req.method,
    path: url.pathname + url.search,
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

/** The principal of a bearer token. Every configured token is compared, in constant time. */
export function tokenPrincipal(header: string, tokens: readonly ApiToken[]): Principal {
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (!m) throw new UnauthorizedError('malformed Authorization header: expected "Bearer <token>"');
  if (tokens.length === 0) throw new UnauthorizedError('bearer tokens are not configured on this server');
  const presented = digest(m[1]!);
  let found: ApiToken | undefined;
  // Hashing first makes each compare constant-time whatever the lengths.
  for (const t of tokens) if (timingSafeEqual(presented, digest(t.token)) && !found) found = t;
  if (!found) throw new UnauthorizedError('invalid bearer token');
  return { name: found.name, via: 'token', scopes: new Set(found.scopes) };
}

function isSigned(c: Context<HttpEnv>): boolean {
  return c.req.header(SIGNATURE_HEADER) !== undefined || c.req.header(TIMESTAMP_HEADER) !== undefined;
}

/** Refuses a signed request its headers already condemn (no secret, malformed, stale), before its body is read. */
function checkSignedHeaders(c: Context<HttpEnv>, auth: AuthSettings): void {
  const reason = signedHeadersFailure({
    secrets: auth.signingSecrets,
    timestampHeader: c.req.header(TIMESTAMP_HEADER),
    signatureHeader: c.req.header(SIGNATURE_HEADER),
    toleranceSec: auth.toleranceSec,
    nowMs: auth.now(),
  });
  if (reason) throw new UnauthorizedError(failureMessage(reason, auth.toleranceSec));
}

/**
 * Reads the body, or answers the body reader's refusal. A path parameter
 * whose escapes do not decode is refused first (a 400): such a request
 * waited for its body, up to the body timeout, to be refused all the same.
 */
async function withBody(c: Context<HttpEnv>, body: BodyReader, then: () => Promise<void>): Promise<Response | void> {
  pathParams(c);
  const refused = await body.read(c);
  if (refused) return refused;
  await then();
}

/** For POST /tick: a valid HMAC signature or nothing (a bearer token never runs a tick). */
export function requireSignature(auth: AuthSettings, bodies: Bodies): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    // Refuse an unsigned, malformed or stale request before reading its body.
    if (!isSigned(c)) {
      const message = failureMessage(auth.signingSecrets.length ? 'unsigned' : 'no_secret', auth.toleranceSec);
      // A bearer token here is the likeliest mistake: say that this route takes none.
      const bearer = c.req.header('authorization') !== undefined ? ': POST /tick takes a signed request only, never a bearer token' : '';
      throw new UnauthorizedError(message + bearer);
    }
    checkSignedHeaders(c, auth);
    return withBody(c, bodies.signed, async () => {
      await checkSignature(c, auth);
      c.set('principal', { name: 'signature', via: 'signature', scopes: new Set() });
      await next();
    });
  };
}

/**
 * For an API route: credentials holding `scope` (or one of several), checked
 * from the headers before the body is read.
 */
export function requireScope(auth: AuthSettings, bodies: Bodies, scope: Scope | readonly Scope[]): MiddlewareHandler<HttpEnv> {
  const signedScopes = new Set(auth.signedScopes);
  const anyOf: readonly Scope[] = typeof scope === 'string' ? [scope] : scope;
  const holds = (scopes: ReadonlySet<Scope>) => anyOf.some((s) => scopes.has(s));
  const needed = anyOf.map((s) => `"${s}"`).join(' or ');
  return async (c, next) => {
    const authorization = c.req.header('authorization');
    if (authorization !== undefined) {
      const principal = tokenPrincipal(authorization, auth.tokens);
      if (!holds(principal.scopes)) throw new ForbiddenError(`token "${principal.name}" lacks the ${needed} scope this route needs`);
      c.set('principal', principal);
      return withBody(c, bodies.verified, next);
    }
    if (isSigned(c)) {
      if (signedScopes.size === 0) {
        throw new UnauthorizedError(`signed requests are accepted on POST /tick only on this server: send "Authorization: Bearer <token>", or let signed requests carry this route's ${needed} scope (WORKHORSE_SIGNED_SCOPES)`);
      }
      if (!holds(signedScopes)) {
        throw new ForbiddenError(`signed requests carry the scopes ${[...signedScopes].join(', ')}; this route needs ${needed}`);
      }
      checkSignedHeaders(c, auth);
      return withBody(c, bodies.signed, async () => {
        await checkSignature(c, auth);
        c.set('principal', { name: 'signature', via: 'signature', scopes: signedScopes });
        await next();
      });
    }
    if (auth.tokens.length === 0 && signedScopes.size === 0) {
      // No credential could pass: say how the server is configured, not what to send.
      throw new UnauthorizedError('missing credentials: this server has no API tokens configured (set WORKHORSE_API_TOKEN or WORKHORSE_API_TOKENS), so no credential opens this route');
    }
    throw new UnauthorizedError(`missing credentials: send "Authorization: Bearer <token>"${signedScopes.size ? ` or sign the request (${SIGNATURE_HEADER})` : ''}`);
  };
}

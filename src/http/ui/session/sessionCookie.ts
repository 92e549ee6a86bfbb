// The dashboard's session: a bearer token exchanged, once, for a cookie that
// carries the token's name and scopes, an expiry and a random session id,
// signed with the server's session secret (HMAC-SHA256). The token itself
// never leaves the sign-in request; the cookie holds a keyed fingerprint of
// it instead, so a session ends as soon as its token is removed from the
// server's configuration, and its scopes never exceed the token's current
// ones. Rotating the session secret signs everyone out.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import * as z from 'zod';
import type { ApiToken } from '../../../credentials/tokens.js';
import { SCOPES, type Scope } from '../../../credentials/scopes.js';

/** `__Host-`: only ever set by this host, over https (or localhost), for every path. */
export const SESSION_COOKIE = '__Host-workhorse-session';

const payloadSchema = z
  .object({
    v: z.literal(1),
    /** Session id: random, the CSRF token is derived from it. */
    sid: z.string().regex(/^[A-Za-z0-9_-]{22}$/),
    /** The token's configured name. */
    name: z.string().min(1).max(64),
    /** Keyed fingerprint of the token. */
    fp: z.string().regex(/^[A-Za-z0-9_-]{22}$/),
    scopes: z.array(z.enum(SCOPES)).max(SCOPES.length),
    /** Expiry, unix seconds. */
    exp: z.number().int().positive(),
  })
  .strict();

type Payload = z.infer<typeof payloadSchema>;

export interface Session {
  id: string;
  tokenName: string;
  scopes: Set<Scope>;
  expiresAt: Date;
}

function mac(secret: string, purpose: string, value: string): Buffer {
  return createHmac('sha256', secret).update(`workhorse ${purpose}\n${value}`, 'utf8').digest();
}

function fingerprint(secret: string, token: string): string {
  return mac(secret, 'token fingerprint', token).subarray(0, 16).toString('base64url');
}

function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The cookie value of a new session for `token`, valid for `ttlMs` from `nowMs`. */
export function issueSession(secret: string, token: ApiToken, ttlMs: number, nowMs: number): { value: string; session: Session } {
  const payload: Payload = {
    v: 1,
    sid: randomBytes(16).toString('base64url'),
    name: token.name,
    fp: fingerprint(secret, token.token),
    scopes: [...token.scopes],
    exp: Math.floor((nowMs + ttlMs) / 1000),
  };
  const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
  const value = `${body}.${mac(secret, 'session', body).toString('base64url')}`;
  return { value, session: { id: payload.sid, tokenName: token.name, scopes: new Set(payload.scopes), expiresAt: new Date(payload.exp * 1000) } };
}

/**
 * The session a cookie value stands for, or null when it is forged,
 * malformed, expired, or its token is no longer configured.
 */
export function readSession(secret: string, value: string, tokens: readonly ApiToken[], nowMs: number): Session | null {
  const dot = value.indexOf('.');
  if (dot <= 0 || value.length > 2048) return null;
  const body = value.slice(0, dot);
  const presented = Buffer.from(value.slice(dot + 1), 'base64url');
  if (!sameBytes(presented, mac(secret, 'session', body))) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  const p = payloadSchema.safeParse(parsed);
  if (!p.success || p.data.exp * 1000 <= nowMs) return null;
  const token = tokens.find((t) => t.name === p.data.name);
  if (!token || !sameBytes(Buffer.from(p.data.fp), Buffer.from(fingerprint(secret, token.token)))) return null;
  const scopes = new Set(p.data.scopes.filter((s) => token.scopes.includes(s)));
  return { id: p.data.sid, tokenName: token.name, scopes, expiresAt: new Date(p.data.exp * 1000) };
}

/** The CSRF token of a session: only the server (holding the secret) can compute it. */
export function csrfTokenFor(secret: string, session: Session): string {
  return mac(secret, 'csrf', session.id).toString('base64url');
}

export function isCsrfTokenOf(secret: string, session: Session, presented: string): boolean {
  return sameBytes(Buffer.from(presented), Buffer.from(csrfTokenFor(secret, session)));
}

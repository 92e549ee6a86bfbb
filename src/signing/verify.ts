// The verifier: checks a signed request's timestamp (within the tolerance,
// either direction) and its HMAC against every accepted secret (the current
// one and, during a rotation, the next one) with a constant-time compare,
// over the normalised path the signer signed (scheme.ts, canonicalTarget).
// Replays inside the tolerance window are not detected: the signed actions
// (a tick, an enqueue with a dedupeKey) are safe to repeat.
import {
  DEFAULT_TOLERANCE_SEC,
  SIGNATURE_VERSION,
  constantTimeEqual,
  fromHex,
  hmacSha256,
  isSignableBody,
  signedMessage,
  type SignableBody,
} from './scheme.js';

export interface VerifyInput {
  /** Accepted secrets, e.g. [current, next]. Empty rejects everything. */
  secrets: readonly string[];
  method: string;
  /** The request's path and query; verified in its normalised form (canonicalTarget). */
  path: string;
  body?: SignableBody;
  timestampHeader: string | null | undefined;
  signatureHeader: string | null | undefined;
  toleranceSec?: number;
  /** The verifier's clock in ms; defaults to Date.now(). */
  nowMs?: number;
}

export type VerifyFailure = 'unsigned' | 'malformed' | 'stale' | 'mismatch' | 'no_secret';

export type VerifyResult = { ok: true; secretIndex: number } | { ok: false; reason: VerifyFailure };

const MAX_SIGNATURES = 4;
const MAC_BYTES = 32;

/**
 * Parses `v1=<hex>[,v1=<hex>…]`: the well-formed v1 values (32-byte MACs).
 * An entry of another version, or a v1 value that is not one, is passed
 * over (a signer in the middle of a change may send more than one); the
 * header is malformed when no entry is a well-formed v1 value, or when it
 * holds more than MAX_SIGNATURES entries.
 */
function parseSignatures(header: string): Uint8Array[] | undefined {
  const parts = header.split(',').map((p) => p.trim());
  if (parts.length === 0 || parts.length > MAX_SIGNATURES) return undefined;
  const macs: Uint8Array[] = [];
  for (const part of parts) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq) !== SIGNATURE_VERSION) continue;
    const mac = fromHex(part.slice(eq + 1));
    if (mac && mac.length === MAC_BYTES) macs.push(mac);
  }
  return macs.length > 0 ? macs : undefined;
}

/** A header as given: a string, or absent (anything else, such as a number or an array of values, is not one header). */
function headerText(v: unknown): string | undefined | false {
  if (v === null || v === undefined) return undefined;
  return typeof v === 'string' ? v.trim() : false;
}

/**
 * The verifier's own settings: a tolerance that is not a finite number of
 * seconds, or a clock that is not a finite number, would turn the
 * timestamp check off (every comparison with NaN is false) and accept a
 * request captured any time ago. A caller's mistake, so a TypeError.
 */
function checkSettings(input: Pick<VerifyInput, 'toleranceSec' | 'nowMs' | 'secrets'>): { tolerance: number; nowMs: number } {
  const tolerance = input.toleranceSec ?? DEFAULT_TOLERANCE_SEC;
  const nowMs = input.nowMs ?? Date.now();
  if (typeof tolerance !== 'number' || !Number.isFinite(tolerance) || tolerance < 0) {
    throw new TypeError(`verifySignedRequest: toleranceSec must be a finite number of seconds, not ${String(input.toleranceSec)}`);
  }
  if (typeof nowMs !== 'number' || !Number.isFinite(nowMs)) throw new TypeError(`verifySignedRequest: nowMs must be a finite number, not ${String(input.nowMs)}`);
  if (!Array.isArray(input.secrets)) throw new TypeError('verifySignedRequest: secrets must be an array of strings');
  return { tolerance, nowMs };
}

/** A usable secret and its index in the caller's list (what secretIndex reports). */
type IndexedSecret = { secret: string; index: number };
type HeaderCheck = { ok: true; ts: string; macs: Uint8Array[]; secrets: IndexedSecret[] } | { ok: false; reason: VerifyFailure };

/** Everything but the MAC: secrets configured, both headers present and well-formed, the timestamp within the tolerance. */
function checkHeaders(input: Omit<VerifyInput, 'method' | 'path' | 'body'>): HeaderCheck {
  const { tolerance, nowMs } = checkSettings(input);
  // An empty or missing secret (an unset variable) is skipped, and the index reported stays the caller's.
  const secrets = input.secrets.flatMap((secret: unknown, index) => (typeof secret === 'string' && secret.length > 0 ? [{ secret, index }] : []));
  if (secrets.length === 0) return { ok: false, reason: 'no_secret' };
  const ts = headerText(input.timestampHeader);
  const sig = headerText(input.signatureHeader);
  if (ts === false || sig === false) return { ok: false, reason: 'malformed' };
  if (!ts || !sig) return { ok: false, reason: 'unsigned' };
  if (!/^[0-9]{1,12}$/.test(ts)) return { ok: false, reason: 'malformed' };
  const macs = parseSignatures(sig);
  if (!macs) return { ok: false, reason: 'malformed' };
  const nowSec = Math.floor(nowMs / 1000);
  if (Math.abs(nowSec - Number(ts)) > tolerance) return { ok: false, reason: 'stale' };
  return { ok: true, ts, macs, secrets };
}

/**
 * The checks a server can make from a signed request's headers alone,
 * before it reads the body: why the request will fail whatever its body,
 * or undefined when only the MAC is left to check.
 */
export function signedHeadersFailure(input: Omit<VerifyInput, 'method' | 'path' | 'body'>): VerifyFailure | undefined {
  const r = checkHeaders(input);
  return r.ok ? undefined : r.reason;
}

export async function verifySignedRequest(input: VerifyInput): Promise<VerifyResult> {
  // The caller's code, not the request: said as signRequest says it (a bad request is a result, never a throw).
  if (typeof input?.method !== 'string') throw new TypeError('verifySignedRequest: method must be the request\'s HTTP method, a string such as "POST"');
  if (!isSignableBody(input.body)) {
    throw new TypeError('verifySignedRequest: body must be the request\'s raw body as a string, Uint8Array or ArrayBuffer (await request.arrayBuffer()), not parsed JSON');
  }
  const h = checkHeaders(input);
  if (!h.ok) return h;
  const { ts, macs, secrets } = h;
  if (typeof input.path !== 'string' || !input.path.startsWith('/')) return { ok: false, reason: 'mismatch' };
  const message = signedMessage(ts, input.method, input.path, input.body);
  for (const { secret, index } of secrets) {
    const expected = await hmacSha256(secret, message);
    let match = false;
    // Every candidate is compared, so timing does not reveal which one matched.
    for (const mac of macs) match = constantTimeEqual(expected, mac) || match;
    if (match) return { ok: true, secretIndex: index };
  }
  return { ok: false, reason: 'mismatch' };
}

// The request-signing scheme shared by signers (edge functions, other
// services) and the HTTP app's verifier: header names, the version tag, the
// tolerance and the exact bytes that get signed. Kept free of any import so
// `workhorse/signing` runs anywhere Web Crypto does (Node, Deno, edge
// runtimes) without pulling in `pg`.

export const SIGNATURE_VERSION = 'v1';
export const TIMESTAMP_HEADER = 'x-workhorse-timestamp';
export const SIGNATURE_HEADER = 'x-workhorse-signature';
/** A signed request is accepted this many seconds either side of the verifier's clock. */
export const DEFAULT_TOLERANCE_SEC = 300;

const encoder = new TextEncoder();

/** Request bodies are signed as raw bytes; a string is taken as UTF-8, an ArrayBuffer (`await request.arrayBuffer()`) as its bytes. */
export type SignableBody = string | Uint8Array | ArrayBuffer | null | undefined;

/** Whether `body` is one a request can be signed over (the type above). */
export function isSignableBody(body: unknown): body is SignableBody {
  return body === null || body === undefined || typeof body === 'string' || body instanceof Uint8Array || body instanceof ArrayBuffer;
}

export function bodyBytes(body: SignableBody): Uint8Array {
  if (body === null || body === undefined) return new Uint8Array(0);
  if (typeof body === 'string') return encoder.encode(body);
  return body instanceof ArrayBuffer ? new Uint8Array(body) : body;
}

/** Any origin will do: only the path and query of the parsed URL are kept. */
const CANONICAL_ORIGIN = 'http://workhorse.invalid';

/**
 * The request target as it is signed: the path and query string after the
 * WHATWG URL parser has normalised them, exactly what `new URL(url)` gives as
 * `pathname + search` for the request's URL, which is what the server sees
 * once its HTTP layer has parsed the request. So dot segments are resolved
 * (`/jobs/../jobs` is `/jobs`, and so is `/jobs/%2e%2e/jobs`), characters a
 * URL cannot carry raw are percent-encoded (`/jobs?q=a b` is `/jobs?q=a%20b`,
 * `é` is `%C3%A9`), existing escapes stay as written (`%6a` is not decoded),
 * an empty `?` and any `#fragment` are dropped, repeated slashes are kept
 * (`//jobs` stays `//jobs`) and the query keeps its order. Normalising an
 * already normalised target changes nothing.
 */
export function canonicalTarget(target: string): string {
  if (typeof target !== 'string') throw new TypeError('a signed path must be a string starting with "/" (path and query, no scheme or host)');
  if (!target.startsWith('/')) throw new TypeError('a signed path must start with "/" (path and query, no scheme or host)');
  const url = new URL(CANONICAL_ORIGIN + target);
  return url.pathname + url.search;
}

/**
 * The signed message: `v1\n<timestamp>\n<METHOD>\n<path>\n` followed by the
 * raw body bytes, where `path` is `canonicalTarget(path)`: the URL path plus
 * its query string (`/jobs?status=failed`) as normalised by the URL parser,
 * without scheme or host.
 */
export function signedMessage(timestamp: string, method: string, path: string, body: SignableBody): Uint8Array {
  const head = encoder.encode(`${SIGNATURE_VERSION}\n${timestamp}\n${method.toUpperCase()}\n${canonicalTarget(path)}\n`);
  const tail = bodyBytes(body);
  const out = new Uint8Array(head.length + tail.length);
  out.set(head, 0);
  out.set(tail, head.length);
  return out;
}

export async function hmacSha256(secret: string, message: Uint8Array): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await crypto.subtle.sign('HMAC', key, message as Uint8Array<ArrayBuffer>));
}

export function toHex(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

/** Decodes lowercase or uppercase hex; undefined for anything else. */
export function fromHex(hex: string): Uint8Array | undefined {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) return undefined;
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** Compares two byte strings in time that depends only on their lengths. */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

// The signer: what an edge function or another service calls to sign a
// request to the workhorse HTTP app (POST /tick, or any API route).
import { SIGNATURE_HEADER, SIGNATURE_VERSION, TIMESTAMP_HEADER, hmacSha256, isSignableBody, signedMessage, toHex, type SignableBody } from './scheme.js';

export interface SignRequestInput {
  /** The shared secret (WORKHORSE_SIGNING_SECRET on the server). */
  secret: string;
  method: string;
  /**
   * Path plus query string, no scheme or host: `/tick`, `/jobs?limit=10`.
   * It is signed in its normalised form (see canonicalTarget), which is what
   * the server verifies, however the path is written.
   */
  path: string;
  /** The exact body that will be sent (sign the same string you send). */
  body?: SignableBody;
  /** Unix seconds; defaults to now. */
  timestamp?: number;
}

/** The two headers to send (a plain object, usable as fetch headers). */
export type SignatureHeaders = {
  'x-workhorse-timestamp': string;
  'x-workhorse-signature': string;
};

/** Returns the two headers to add to the request. */
export async function signRequest(input: SignRequestInput): Promise<SignatureHeaders> {
  if (typeof input.secret !== 'string' || input.secret.length === 0) throw new TypeError('signRequest: secret is required');
  if (typeof input.path !== 'string' || !input.path.startsWith('/')) throw new TypeError('signRequest: path must start with "/" (path and query, no host)');
  if (input.timestamp !== undefined && (!Number.isFinite(input.timestamp) || input.timestamp < 0)) {
    throw new TypeError('signRequest: timestamp must be unix seconds (a finite number, at least 0)');
  }
  if (!isSignableBody(input.body)) {
    throw new TypeError('signRequest: body must be the string, Uint8Array or ArrayBuffer you send (JSON.stringify an object first)');
  }
  if (typeof input.method !== 'string' || !/^[A-Za-z]+$/.test(input.method)) throw new TypeError('signRequest: method must be an HTTP method such as "POST"');
  const timestamp = String(Math.floor(input.timestamp ?? Date.now() / 1000));
  const mac = await hmacSha256(input.secret, signedMessage(timestamp, input.method, input.path, input.body));
  return { [TIMESTAMP_HEADER]: timestamp, [SIGNATURE_HEADER]: `${SIGNATURE_VERSION}=${toHex(mac)}` } as SignatureHeaders;
}

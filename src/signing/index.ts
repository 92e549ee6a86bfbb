// `workhorse/signing`: the request-signing helper on its own, importable by
// edge functions and other services without the rest of workhorse (no `pg`,
// no Node built-ins: only Web Crypto).
export { signRequest } from './sign.js';
export type { SignRequestInput, SignatureHeaders } from './sign.js';
export { verifySignedRequest } from './verify.js';
export type { VerifyInput, VerifyResult, VerifyFailure } from './verify.js';
export { SIGNATURE_HEADER, TIMESTAMP_HEADER, SIGNATURE_VERSION, DEFAULT_TOLERANCE_SEC, signedMessage, canonicalTarget } from './scheme.js';
export type { SignableBody } from './scheme.js';

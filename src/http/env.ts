// The Hono environment every workhorse route shares: who the request
// authenticated as, the raw request body (read once, after the header checks
// and under the limits, because the HMAC covers its exact bytes) and, on
// Lambda, the invocation context that bounds a tick's budget.
import type { LambdaContext } from 'hono/aws-lambda';
import type { Scope } from '../credentials/scopes.js';

/** Who a request authenticated as: a named token, or a signature. */
export interface Principal {
  /** The token's configured name, or "signature". Never the secret itself. */
  name: string;
  via: 'token' | 'signature';
  scopes: ReadonlySet<Scope>;
}

export interface HttpVariables {
  /** The request body's exact bytes (empty for GET). Set by the route's guard. */
  rawBody: Uint8Array;
  /** Set by the route's guard once the credentials passed. */
  principal: Principal;
}

export interface HttpBindings {
  /** Present when running under hono/aws-lambda. */
  lambdaContext?: LambdaContext;
}

export type HttpEnv = { Variables: HttpVariables; Bindings: HttpBindings };

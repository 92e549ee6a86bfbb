// The Hono environment every workhorse route shares: the raw request body
// (read once, under the size limit, because the HMAC covers its exact bytes)
// and, on Lambda, the invocation context that bounds a tick's budget.
import type { LambdaContext } from 'hono/aws-lambda';

export interface HttpVariables {
  /** The request body's exact bytes (empty for GET). */
  rawBody: Uint8Array;
}

export interface HttpBindings {
  /** Present when running under hono/aws-lambda. */
  lambdaContext?: LambdaContext;
}

export type HttpEnv = { Variables: HttpVariables; Bindings: HttpBindings };

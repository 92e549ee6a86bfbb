// createHttpHandler: the HTTP app as a Lambda handler (Function URL or API
// Gateway HTTP API, payload format 2.0; v1 and ALB events work too). Nothing
// is built at import: the first invocation reads the environment and builds
// the app; later invocations in the same container reuse it and its pool. A
// failed build (bad config) fails that invocation and is tried again by the
// next one.
import { handle, type LambdaContext, type LambdaEvent } from 'hono/aws-lambda';
import type { WorkhorseApp } from '../app.js';
import { createHttpService, type HttpServiceOptions } from './service.js';

export type HttpHandlerOptions = Omit<HttpServiceOptions, 'app'>;

/** Lambda's answer: status, headers and body of the HTTP response. */
export type HttpHandlerResult = Awaited<ReturnType<ReturnType<typeof handle>>>;
export type HttpHandler = (event: LambdaEvent, context: LambdaContext) => Promise<HttpHandlerResult>;

/** Builds the handler now, reading the environment once. */
export function buildHttpHandler(app: WorkhorseApp | undefined, options: HttpHandlerOptions = {}): HttpHandler {
  // One request at a time per container: a small pool is plenty.
  const h = handle(createHttpService({ poolMax: 3, ...options, app }).app);
  return (event, context) => h(event, context);
}

/** The handler for a bundled entry: `export const handler = createHttpHandler(app)`. */
export function createHttpHandler(app?: WorkhorseApp, options: HttpHandlerOptions = {}): HttpHandler {
  let handler: HttpHandler | undefined;
  return async (event, context) => {
    handler ??= buildHttpHandler(app, options);
    return handler(event, context);
  };
}

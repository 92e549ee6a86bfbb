// The shipped Lambda entry for the HTTP app (a Function URL or an API
// Gateway HTTP API). It finds the user's app through WORKHORSE_APP (a path or
// file URL of the compiled module whose default export is defineApp(...)),
// loaded once per container on the first invocation; nothing runs at import.
// Variables given as secrets (X_SECRET_ARN) are read as createHttpHandler
// reads them.
// The bundled alternative, with no module loaded by path at run time, is a
// two-line entry of your own: `export const handler = createHttpHandler(app)`.
import type { LambdaContext, LambdaEvent } from 'hono/aws-lambda';
import { loadHttpEnvConfig } from '../src/config.js';
import { createHttpHandler, type HttpHandler, type HttpHandlerResult } from '../src/http/lambda.js';
import { loadAppModule } from '../src/tick/appModule.js';

let built: Promise<HttpHandler> | undefined;
/** Whether an invocation has succeeded: until then a failure may be bad configuration. */
let served = false;

async function build(): Promise<HttpHandler> {
  const { appModule } = loadHttpEnvConfig();
  return createHttpHandler(appModule ? await loadAppModule(appModule) : undefined);
}

export async function handler(event: LambdaEvent, context: LambdaContext): Promise<HttpHandlerResult> {
  // A failed build (bad config, missing module) is retried by the next invocation.
  const current = (built ??= build());
  try {
    const res = await (await current)(event, context);
    served = true;
    return res;
  } catch (err) {
    if (!served && built === current) built = undefined;
    throw err;
  }
}

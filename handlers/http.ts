// The shipped Lambda entry for the HTTP app (a Function URL or an API
// Gateway HTTP API). It finds the user's app through WORKHORSE_APP (a path or
// file URL of the compiled module whose default export is defineApp(...)),
// loaded once per container on the first invocation; nothing runs at import.
// The bundled alternative, with no module loaded by path at run time, is a
// two-line entry of your own: `export const handler = createHttpHandler(app)`.
import type { LambdaContext, LambdaEvent } from 'hono/aws-lambda';
import { loadHttpEnvConfig } from '../src/config.js';
import { buildHttpHandler, type HttpHandler, type HttpHandlerResult } from '../src/http/lambda.js';
import { loadAppModule } from '../src/tick/appModule.js';

let built: Promise<HttpHandler> | undefined;

async function build(): Promise<HttpHandler> {
  const { appModule } = loadHttpEnvConfig();
  return buildHttpHandler(appModule ? await loadAppModule(appModule) : undefined);
}

export async function handler(event: LambdaEvent, context: LambdaContext): Promise<HttpHandlerResult> {
  // A failed build (bad config, missing module) is retried by the next invocation.
  built ??= build().catch((err: unknown) => {
    built = undefined;
    throw err;
  });
  return (await built)(event, context);
}

// The shipped Lambda entry for the serverless tick (EventBridge scheduled
// events and fan-out invocations). It finds the user's app through the
// WORKHORSE_APP environment variable: the path (or file URL) of the compiled
// module whose default export is defineApp({ jobs, configure, schedules }).
// The module is imported once per container, on the first invocation, and
// cached; a failed load is retried by the next invocation. Nothing runs at
// module scope.
//
// The recommended (bundled) form needs no WORKHORSE_APP: write your own entry
//
//   import app from './app.js';
//   import { createTickHandler } from 'workhorse';
//   export const handler = createTickHandler(app);
//
// and bundle it (the CDK construct generates exactly this file).
import { loadTickEnv } from '../src/config.js';
import { ConfigError } from '../src/errors.js';
import { loadAppModule } from '../src/tick/appModule.js';
import { createTickHandler, type TickContext, type TickHandler } from '../src/tick/handler.js';
import type { TickSummary } from '../src/tick/summary.js';

let loading: Promise<TickHandler> | undefined;

async function load(): Promise<TickHandler> {
  const env = loadTickEnv();
  if (!env.appModule) {
    const message = 'WORKHORSE_APP is not set: point it at the compiled module whose default export is defineApp(...)';
    throw new ConfigError(message, [{ path: ['WORKHORSE_APP'], message }]);
  }
  return createTickHandler(await loadAppModule(env.appModule));
}

export async function handler(event: unknown, context: TickContext): Promise<TickSummary> {
  loading ??= load().catch((err: unknown) => {
    loading = undefined;
    throw err;
  });
  const tick = await loading;
  const summary = await tick(event, context);
  console.log(JSON.stringify({ workhorse: 'tick', ...summary }));
  return summary;
}

// createHttpHandler: the HTTP app as a Lambda handler (Function URL or API
// Gateway HTTP API, payload format 2.0; v1 and ALB events work too). Nothing
// is built at import: the first invocation reads the environment, reading
// the variables given as secrets from Secrets Manager (src/secrets/), and
// builds the app; later invocations reuse it and its pool. The app is
// rebuilt (and the old pool closed) whenever a secret's value changes: once
// a secret is older than the maximum age; after the database refused a
// login (a rotated password: that request gets a 503 and the next one the
// new credential); and after a request carrying credentials got a 401 (a
// rotated signing secret or token, which the caller may already use: the
// request is answered again by the rebuilt app, since a 401 ran nothing).
// Those re-reads are rate-limited per secret, so a flood of bad requests
// cannot hammer Secrets Manager. A failed build fails that invocation and is
// tried again by the next one.
import { handle, type LambdaContext, type LambdaEvent } from 'hono/aws-lambda';
import type { WorkhorseApp } from '../app/defineApp.js';
import { DATABASE_URL_VARIABLE, isDatabaseAuthFailure } from '../secrets/authFailure.js';
import { lambdaEnvironment, secretReadBoundMs } from '../secrets/lambdaEnvironment.js';
import type { SecretEnvironment } from '../secrets/secretEnvironment.js';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../signing/scheme.js';
import { adapterRefusal, refusedEvent, withoutGetBody } from './lambdaEvent.js';
import { ERROR_HEADERS } from './clientErrors.js';
import { LOGIN_REFUSED } from './middleware/errorHandler.js';
import { createHttpService, type HttpServiceOptions } from './service.js';

export type HttpHandlerOptions = Omit<HttpServiceOptions, 'app'>;

/** Lambda's answer: status, headers and body of the HTTP response. */
export type HttpHandlerResult = Awaited<ReturnType<ReturnType<typeof handle>>>;
export type HttpHandler = (event: LambdaEvent, context: LambdaContext) => Promise<HttpHandlerResult>;

/** One request at a time per container: a small pool is plenty. */
const LAMBDA_POOL_MAX = 3;
const CREDENTIAL_HEADERS = new Set(['authorization', SIGNATURE_HEADER, TIMESTAMP_HEADER]);

interface BuiltApp {
  /** The version of the resolved environment it was built from. */
  version: number;
  handle: HttpHandler;
  close(): Promise<void>;
  /** loginRefused: a request failed because the database refused the login. */
  state: { loginRefused: boolean };
}

function buildApp(app: WorkhorseApp | undefined, options: HttpHandlerOptions, env: HttpServiceOptions['env'], version: number): BuiltApp {
  const log = options.overrides?.log ?? ((message: string, err: unknown) => console.error(message, err));
  const state = { loginRefused: false };
  const service = createHttpService({
    poolMax: LAMBDA_POOL_MAX,
    ...options,
    app,
    env,
    overrides: {
      ...options.overrides,
      log: (message, err) => {
        if (isDatabaseAuthFailure(err) || message.includes(LOGIN_REFUSED)) state.loginRefused = true;
        log(message, err);
      },
    },
  });
  const h = handle(service.app);
  const answer: HttpHandler = async (event, context) => {
    const result = await h(withoutGetBody(event), context);
    return (adapterRefusal(result) as HttpHandlerResult | undefined) ?? result;
  };
  return { version, state, handle: (event, context) => refusedAnswer(event) ?? answer(event, context), close: () => service.close() };
}

/** The 400 for an event the adapter cannot read (lambdaEvent.ts), as a resolved answer. */
function refusedAnswer(event: unknown): Promise<HttpHandlerResult> | undefined {
  const r = refusedEvent(event);
  return r ? Promise.resolve(r as HttpHandlerResult) : undefined;
}

/** Builds the handler now, from `options.env` or the process environment as it is (no secrets are read). */
export function buildHttpHandler(app: WorkhorseApp | undefined, options: HttpHandlerOptions = {}): HttpHandler {
  return buildApp(app, options, options.env, 0).handle;
}

/** Whether the request presented a bearer token or a signature. */
function carriesCredentials(event: LambdaEvent): boolean {
  const headers = (event as { headers?: Record<string, unknown> | null }).headers ?? {};
  return Object.keys(headers).some((k) => CREDENTIAL_HEADERS.has(k.toLowerCase()));
}

const loginRefusedResponse = (): HttpHandlerResult => ({
  statusCode: 503,
  headers: { ...ERROR_HEADERS, 'retry-after': '1' },
  body: JSON.stringify({
    error: { code: 'database_login_refused', message: 'the database refused the login; the credential is being read again: retry' },
  }),
  isBase64Encoded: false,
});

/** How long a secret read may take in this invocation (unbounded without a Lambda context). */
function secretReadBound(context: LambdaContext | undefined): number | undefined {
  return secretReadBoundMs(typeof context?.getRemainingTimeInMillis === 'function' ? context.getRemainingTimeInMillis() : undefined);
}

/** The handler for a bundled entry: `export const handler = createHttpHandler(app)`. */
export function createHttpHandler(app?: WorkhorseApp, options: HttpHandlerOptions = {}): HttpHandler {
  let environment: SecretEnvironment | undefined;
  let built: BuiltApp | undefined;
  const current = async (context: LambdaContext | undefined): Promise<BuiltApp> => {
    environment ??= lambdaEnvironment({ env: options.env });
    const { env, version } = await environment.current(secretReadBound(context));
    if (built?.version !== version) {
      const old = built;
      try {
        built = buildApp(app, options, env, version);
      } catch (err) {
        // Bad configuration: the next invocation reads the environment afresh.
        environment = undefined;
        throw err;
      }
      await old?.close().catch(() => undefined);
    }
    return built;
  };
  return async (event, context) => {
    const a = await current(context);
    const res = await a.handle(event, context);
    if (a.state.loginRefused) {
      a.state.loginRefused = false;
      await environment!.refresh((v) => v === DATABASE_URL_VARIABLE, secretReadBound(context));
      // The refusal's own answer (503 database_unreachable) says the credential is being read again.
      return res.statusCode === 503 || res.statusCode === 500 ? loginRefusedResponse() : res;
    }
    if (res.statusCode === 401 && carriesCredentials(event) && (await environment!.refresh((v) => v !== DATABASE_URL_VARIABLE, secretReadBound(context)))) {
      return (await current(context)).handle(event, context);
    }
    return res;
  };
}

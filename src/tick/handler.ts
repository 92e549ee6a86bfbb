// createTickHandler: the Lambda handler for EventBridge scheduled events (and
// for fan-out invocations, whose payload is `{ generation }`). The tick's
// settings come from the environment, read once per container on the first
// invocation (a bad setting fails that invocation with a ConfigError), and
// from the options given here, which win. A variable given as a secret
// (DATABASE_URL_SECRET_ARN, src/secrets/) is read from Secrets Manager on the
// first invocation and again once it is older than the maximum age; when the
// database refuses the login, the secret is read again and, if the URL
// changed (a rotated password), the tick runs once more with the new one.
// Each invocation's deadline is the invocation's own: now +
// context.getRemainingTimeInMillis(); a context without that function, or
// one that answers something other than a finite number, is a
// ValidationError before anything runs (a tick needs a deadline).
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import * as z from 'zod';
import { appProblem, type WorkhorseApp } from '../app/defineApp.js';
import { loadTickEnv } from '../config.js';
import { ConfigError } from '../errors.js';
import { readyBacklogEmfLine } from '../metrics/readyBacklogMetric.js';
import { DATABASE_URL_VARIABLE, isDatabaseAuthFailure } from '../secrets/authFailure.js';
import { lambdaEnvironment, secretReadBoundMs } from '../secrets/lambdaEnvironment.js';
import type { SecretEnvironment } from '../secrets/secretEnvironment.js';
import { parseConfig, parseField, parseInput } from '../validation.js';
import { tickOptionsShape, type TickOptions } from './options.js';
import { runTick } from './runTick.js';
import type { TickSummary } from './summary.js';

/** The part of the Lambda context a tick reads. */
export interface TickContext {
  getRemainingTimeInMillis(): number;
  awsRequestId?: string;
  functionName?: string;
  functionVersion?: string;
}

export type TickHandler = (event: unknown, context: TickContext) => Promise<TickSummary>;

export type TickHandlerOptions = Partial<Omit<TickOptions, 'app' | 'deadline' | 'generation'>>;

/** The options a handler is made with: the tick's, none required, and no app, deadline or generation (each invocation's own). */
const handlerOptionsSchema = tickOptionsShape.omit({ app: true, deadline: true, generation: true }).partial();

/** A scheduled event carries anything; a fan-out invocation carries its generation. */
const tickEventSchema = z.looseObject({ generation: z.number().int().min(0).max(1000).optional() });

/** Lambda's context always has it; a caller that passes its own must too. */
const tickContextSchema = z.looseObject({
  getRemainingTimeInMillis: z.custom<() => number>((v) => typeof v === 'function', 'expected a function returning the milliseconds left'),
});
const remainingSchema = z.number({ error: 'expected the milliseconds left, a finite number' }).finite();

function workerIdFor(context: TickContext): string {
  const fn = context.functionName ?? hostname();
  return `tick:${fn}:${context.awsRequestId ?? randomBytes(6).toString('hex')}`.slice(0, 200);
}

/** The tick's options from a (resolved) environment. */
function optionsFromEnv(resolved: Record<string, string | undefined>): TickHandlerOptions {
  const env = loadTickEnv(resolved);
  const fromEnv: TickHandlerOptions = { ...env.options };
  if (env.backlogMetric) {
    // One EMF line on stdout: CloudWatch Logs turns it into the metric the construct alarms on. Its
    // namespace is the tick's (createTickHandler's options may name another than WORKHORSE_NAMESPACE).
    fromEnv.reportBacklog = (n, namespace) => console.log(readyBacklogEmfLine(namespace, n));
  }
  return fromEnv;
}

export function createTickHandler(app: WorkhorseApp, options: TickHandlerOptions = {}): TickHandler {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new ConfigError('createTickHandler: the options must be an object, e.g. { namespace }', [{ path: ['options'], message: 'expected an object' }]);
  }
  // Checked when the module loads, as defineApp checks the app: not at every invocation, after a deploy.
  const problem = appProblem(app);
  if (problem) throw new ConfigError(`createTickHandler: ${problem}`, [{ path: ['app'], message: problem }]);
  parseConfig(handlerOptionsSchema, options, 'createTickHandler options');
  let environment: SecretEnvironment | undefined;
  let settings: { version: number; options: TickHandlerOptions } | undefined;
  const fromEnv = async (boundMs: number | undefined): Promise<TickHandlerOptions> => {
    environment ??= lambdaEnvironment();
    const { env, version } = await environment.current(boundMs);
    if (settings?.version !== version) {
      try {
        settings = { version, options: optionsFromEnv(env) };
      } catch (err) {
        // Bad configuration: the next invocation reads the environment afresh.
        environment = undefined;
        throw err;
      }
    }
    return settings.options;
  };
  return async (event, context) => {
    const e = parseInput(tickEventSchema, event ?? {}, 'tick event');
    parseInput(tickContextSchema, context, 'tick context');
    const tick = async () => {
      const remainingMs = parseField(remainingSchema, context.getRemainingTimeInMillis(), 'getRemainingTimeInMillis()', 'tick context');
      const deadline = new Date(Date.now() + remainingMs);
      // Options win over the environment: a pool given in code replaces DATABASE_URL (the IAM path), not clashes with it.
      // A secret read gives up in time for the invocation to return its error (it waited its own 8 s).
      const { connectionString: envUrl, ...envRest } = await fromEnv(secretReadBoundMs(remainingMs));
      const envOptions = options.pool === undefined && envUrl !== undefined ? { ...envRest, connectionString: envUrl } : envRest;
      const build = context.functionVersion ? `${context.functionName ?? 'lambda'}:${context.functionVersion}` : undefined;
      return runTick({
        workerId: workerIdFor(context),
        ...(build ? { build } : {}),
        ...envOptions,
        ...options,
        app,
        deadline,
        generation: e.generation ?? 0,
      });
    };
    try {
      return await tick();
    } catch (err) {
      // A refused login with the URL from a secret: the password may have been rotated.
      const rotated =
        isDatabaseAuthFailure(err) && environment !== undefined && (await environment.refresh((v) => v === DATABASE_URL_VARIABLE));
      if (!rotated) throw err;
      return tick();
    }
  };
}

// The props of the WorkhorseTickWorker construct and their zod schema. The
// construct parses them first thing, so a bad value (a timeout Lambda does
// not allow, a heartbeat that cannot fit in the tick, a negative
// concurrency) fails `cdk synth` with a ConfigError naming the field, instead
// of failing a deployment half-way or producing a worker that cannot work.
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { ISecurityGroup, IVpc, SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Token } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import * as z from 'zod';
import { namespaceSchema } from '../src/names.js';
import { parseConfig } from '../src/validation.js';
import { handlerVariableProblems, tickVariableProblems } from './environmentChecks.js';
import { deepestFittingGeneration, fanoutTicks } from './fanoutBound.js';
import { scheduleExpressionSchema } from './scheduleExpression.js';

/** Lambda's hard limit on a function's timeout. */
export const MAX_LAMBDA_TIMEOUT_SECONDS = 900;

const secretSchema = z.custom<ISecret>(
  (v) =>
    typeof v === 'object' &&
    v !== null &&
    typeof (v as ISecret).secretArn === 'string' &&
    typeof (v as ISecret).secretValueFromJson === 'function',
  'expected a Secrets Manager secret (an ISecret)',
);

const constructsSchema = z.array(z.custom<Construct>((v) => typeof v === 'object' && v !== null && 'node' in v));

const postgresUrlSchema = z
  .string()
  .min(1)
  .refine(
    (s) => Token.isUnresolved(s) || /^postgres(ql)?:\/\//.test(s),
    'expected a postgres:// or postgresql:// connection URL',
  );

/**
 * Where a function finds PostgreSQL: a plain URL (fine for a dev stack) or
 * a Secrets Manager secret, read at run time. Secret shapes: `rds` (default)
 * is the JSON RDS and Aurora generate ({ username, password, host, port,
 * dbname }); `url` is a secret whose whole value is the connection URL;
 * `json` is a JSON secret with the URL in `field` (default "url").
 */
const databaseSchema = z.union([
  z.strictObject({ url: postgresUrlSchema }),
  z.strictObject({
    secret: secretSchema,
    shape: z.enum(['rds', 'url', 'json']).default('rds'),
    field: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'a JSON field name: letters, digits, "_", "." and "-"').default('url'),
    /** rds shape: the database to connect to when the secret has no dbname. */
    databaseName: z.string().min(1).optional(),
    /** rds shape: host and port when the secret lacks them (RDS-managed master secrets hold only credentials). */
    host: z.string().min(1).optional(),
    port: z.number().int().min(1).max(65_535).optional(),
    /** rds shape: query string appended to the composed URL. */
    urlQuery: z.string().default('sslmode=verify-full'),
  }),
], { error: 'give either { url } or { secret } (with shape rds, url or json)' });

const httpSchema = z.strictObject({
  enabled: z.boolean().default(true),
  timeoutSeconds: z.number().int().min(1).max(MAX_LAMBDA_TIMEOUT_SECONDS).default(30),
  memorySize: z.number().int().min(128).max(10_240).default(512),
  reservedConcurrency: z.number().int().min(1, 'must be at least 1').default(2),
  /** The HMAC signing secret (a plain string secret). Generated when omitted. */
  signingSecret: secretSchema.optional(),
  /** The next signing secret, accepted alongside the current one during rotation. */
  signingSecretNext: secretSchema.optional(),
  /** A bearer token for the API routes (a plain string secret). */
  apiTokenSecret: secretSchema.optional(),
  /**
   * More variables for the HTTP function given as secrets: each name X
   * becomes X_SECRET_ARN, read at run time (e.g. { WORKHORSE_API_TOKENS: tokens }).
   */
  secretEnvironment: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name'), secretSchema).default({}),
});

const alarmsSchema = z.strictObject({
  enabled: z.boolean().default(true),
  /** An SNS topic every alarm notifies. */
  topic: z.custom<ITopic>((v) => typeof v === 'object' && v !== null && 'topicArn' in v).optional(),
  /** Alarm when the ready backlog stays above this many jobs. */
  readyBacklogThreshold: z.number().int().min(1).default(1000),
  /**
   * Alarm when a function's maximum duration passes this share of its
   * timeout. Unset: half-way between when it plans to return (the timeout
   * less the safety margin) and the timeout, since a tick under a backlog
   * works its whole window by design (workhorseAlarms.ts).
   */
  durationRatio: z.number().gt(0).lt(1).optional(),
  /** One alarm per sys.alerts rule (on Workhorse/OpenAlerts; quiet while the app does not configure alerts). */
  alertRules: z.boolean().default(true),
});

/**
 * Variables the construct sets itself (plain or as secrets), with the prop
 * that sets them. Neither environment nor secretEnvironment may name them
 * (nor, in environment, their X_SECRET_ARN and X_SECRET_TEMPLATE forms): a
 * function given both X and X_SECRET_ARN fails every invocation, and one
 * given X twice silently takes one of them.
 */
const CONSTRUCT_VARIABLES = new Map([
  ['DATABASE_URL', 'the database and runtimeDatabase props'],
  ['WORKHORSE_SIGNING_SECRET', 'the http.signingSecret prop'],
  ['WORKHORSE_SIGNING_SECRET_NEXT', 'the http.signingSecretNext prop'],
  ['WORKHORSE_API_TOKEN', 'the http.apiTokenSecret prop'],
  ['WORKHORSE_NAMESPACE', 'the namespace prop'],
  ['WORKHORSE_HEARTBEAT_MS', 'the heartbeatMs prop'],
  ['WORKHORSE_SAFETY_MARGIN_MS', 'the safetyMarginMs prop'],
  ['WORKHORSE_MAX_FANOUT', 'the maxFanout prop'],
  ['WORKHORSE_MAX_GENERATION', 'the maxGeneration prop'],
  // Fan-out invokes the tick function, the only one its IAM allows: another name would fail with AccessDenied.
  ['WORKHORSE_FANOUT_FUNCTION', 'the maxFanout prop (fan-out invokes the tick function)'],
  // The tick function always publishes it: the backlog alarm reads it.
  ['WORKHORSE_BACKLOG_METRIC', 'the alarms prop (the tick function publishes the ready backlog for its alarm)'],
]);

/** Set plainly by the construct on the HTTP function, and open to a plain override in environment only. */
const HTTP_PLAIN_VARIABLES = new Set(['WORKHORSE_HTTP_TICK_BUDGET_MS']);

/**
 * Variables that hold a secret value the construct does not set itself:
 * plainly in `environment` they would reach every function's configuration
 * (readable with lambda:GetFunctionConfiguration), the tick and migration
 * functions included, which never read them.
 */
const SECRET_VALUED_VARIABLES = new Set(['WORKHORSE_API_TOKENS', 'WORKHORSE_SESSION_SECRET']);

/** The construct variable `name` sets, given plainly or as a secret; undefined for any other name. */
function constructVariable(name: string): string | undefined {
  const base = name.replace(/_SECRET_(ARN|TEMPLATE)$/, '');
  return CONSTRUCT_VARIABLES.has(base) ? base : undefined;
}

/** Stands for a secret ARN known only at deploy (a token) when the environment is checked at synth. */
const PLACEHOLDER_SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:deploy-time-AbCdEf';

/** What a function's timeout must keep beyond its heartbeat or safety margin: the invocation's start and some work. */
const START_ALLOWANCE_MS = 1000;

export const tickWorkerPropsSchema = z
  .strictObject({
    /** The app module: its default export is `defineApp({ jobs, configure })`. */
    app: z.string().min(1),
    /** The owner credential: only the deploy-time migration uses it. */
    database: databaseSchema,
    /**
     * The credential the tick and HTTP functions use: a login role that is a
     * member of workhorse_runtime (sql/008_runtime_role.sql), which cannot
     * change the schema. Defaults to `database` (with a synth warning).
     */
    runtimeDatabase: databaseSchema.optional(),
    namespace: namespaceSchema.default('default'),
    /** An EventBridge schedule expression (checked as EventBridge checks it, scheduleExpression.ts). */
    schedule: scheduleExpressionSchema.default('rate(1 minute)'),
    timeoutSeconds: z
      .number()
      .int()
      .min(10, 'a tick needs at least 10 seconds')
      .max(MAX_LAMBDA_TIMEOUT_SECONDS, `Lambda allows at most ${MAX_LAMBDA_TIMEOUT_SECONDS} seconds`)
      .default(60),
    memorySize: z.number().int().min(128).max(10_240).default(512),
    /** The connection budget: at most this many ticks at once, each with at most 2 connections. */
    reservedConcurrency: z.number().int().min(1, 'must be at least 1').default(5),
    heartbeatMs: z.number().int().min(100).default(5000),
    safetyMarginMs: z.number().int().min(0).optional(),
    /** How many extra ticks one tick may start when the backlog is deep; 0 turns fan-out off. */
    maxFanout: z.number().int().min(0).max(100).default(0),
    /**
     * Fan-out generations: a tick of this generation fans out no further.
     * Default: the deepest (at most 3) whose burst, maxFanout + maxFanout² +
     * … ticks, stays below reservedConcurrency.
     */
    maxGeneration: z.number().int().min(1).max(10).optional(),
    http: httpSchema.default({
      enabled: true,
      timeoutSeconds: 30,
      memorySize: 512,
      reservedConcurrency: 2,
      secretEnvironment: {},
    }),
    /**
     * Trust Amazon's CAs (RDS, Aurora, RDS Proxy) for TLS to the database: Lambda's
     * Node.js 20+ runtimes load them only when NODE_EXTRA_CA_CERTS names their bundle.
     */
    trustAwsCertificates: z.boolean().default(true),
    /** Retention of every log group the construct creates (the trigger provider's included). */
    logRetention: z.enum(RetentionDays).default(RetentionDays.ONE_MONTH),
    vpc: z.custom<IVpc>((v) => typeof v === 'object' && v !== null && 'vpcId' in v).optional(),
    vpcSubnets: z.custom<SubnetSelection>((v) => typeof v === 'object' && v !== null).optional(),
    securityGroups: z
      .array(z.custom<ISecurityGroup>((v) => typeof v === 'object' && v !== null && 'securityGroupId' in v))
      .optional(),
    alarms: alarmsSchema.default({ enabled: true, readyBacklogThreshold: 1000, alertRules: true }),
    /** Extra environment variables for every function. */
    environment: z.record(z.string(), z.string()).default({}),
    /** Run the migration only after these (e.g. the database) are deployed. */
    migrationExecuteAfter: constructsSchema.default([]),
    /** The workhorse package directory (holds sql/ and src/ or dist/). Found automatically. */
    workhorseRoot: z.string().min(1).optional(),
    bundling: z
      .strictObject({
        minify: z.boolean().default(true),
        sourceMap: z.boolean().default(true),
        external: z.array(z.string().min(1)).default([]),
      })
      .default({ minify: true, sourceMap: true, external: [] }),
  })
  .superRefine((p, ctx) => {
    // An invocation starts with a little less than its timeout left, and the
    // tick needs some of it to start: each must leave START_ALLOWANCE_MS.
    const timeoutMs = p.timeoutSeconds * 1000;
    const usableMs = timeoutMs - START_ALLOWANCE_MS;
    if (p.heartbeatMs > usableMs) {
      ctx.addIssue({
        code: 'custom',
        path: ['heartbeatMs'],
        message: `heartbeatMs (${p.heartbeatMs}) must leave the tick ${START_ALLOWANCE_MS} ms of its timeout (${timeoutMs} ms): at most ${usableMs}`,
      });
    }
    if (p.http.enabled && p.heartbeatMs > p.http.timeoutSeconds * 1000 - START_ALLOWANCE_MS) {
      ctx.addIssue({
        code: 'custom',
        path: ['heartbeatMs'],
        message: `heartbeatMs (${p.heartbeatMs}) must leave the HTTP function ${START_ALLOWANCE_MS} ms of its timeout (${p.http.timeoutSeconds * 1000} ms): at most ${p.http.timeoutSeconds * 1000 - START_ALLOWANCE_MS}`,
      });
    }
    if (p.safetyMarginMs !== undefined && p.safetyMarginMs > usableMs) {
      ctx.addIssue({
        code: 'custom',
        path: ['safetyMarginMs'],
        message: `safetyMarginMs (${p.safetyMarginMs}) must leave the tick ${START_ALLOWANCE_MS} ms of its timeout (${timeoutMs} ms): at most ${usableMs}`,
      });
    }
    // The tick's own variables given in `environment` are checked as the tick will check them: each
    // parses, and the option it becomes is in the range the tick takes (WORKHORSE_CONCURRENCY=0 parsed,
    // and failed every invocation).
    const tickVariables = Object.entries(p.environment).filter(([k, v]) => k.startsWith('WORKHORSE_') && !Token.isUnresolved(v));
    for (const [name, value] of tickVariables) {
      for (const message of tickVariableProblems(name, value)) ctx.addIssue({ code: 'custom', path: ['environment', name], message });
    }
    // And the rest of what the handlers read from it: the secrets settings and references, the HTTP
    // function's variables (WORKHORSE_HTTP_TICK_BUDGET_MS=500 passed synth, and failed every invocation).
    // A value known only at deploy (a token) is not checked; a secret's ARN given so (secret.secretArn) still
    // counts as given, for the template that reads it.
    const known = Object.fromEntries(
      Object.entries(p.environment).flatMap(([k, v]) => (!Token.isUnresolved(v) ? [[k, v]] : k.endsWith('_SECRET_ARN') ? [[k, PLACEHOLDER_SECRET_ARN]] : [])),
    );
    for (const { name, message } of handlerVariableProblems(known, p.http.enabled)) ctx.addIssue({ code: 'custom', path: ['environment', name], message });
    if (p.reservedConcurrency >= 1 && p.maxFanout >= p.reservedConcurrency) {
      ctx.addIssue({
        code: 'custom',
        path: ['maxFanout'],
        message: `maxFanout (${p.maxFanout}) must be below reservedConcurrency (${p.reservedConcurrency}) so the scheduled tick keeps a slot`,
      });
    } else if (p.maxFanout === 0 && p.maxGeneration !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['maxGeneration'], message: 'maxGeneration bounds fan-out, which is off (maxFanout 0): set maxFanout too, or leave maxGeneration out' });
    } else if (p.maxFanout > 0 && p.maxGeneration !== undefined && fanoutTicks(p.maxFanout, p.maxGeneration) >= p.reservedConcurrency) {
      // Every generation below the last fans out again: the burst is the sum, not maxFanout.
      ctx.addIssue({
        code: 'custom',
        path: ['maxGeneration'],
        message: `maxFanout ${p.maxFanout} over ${p.maxGeneration} generations starts up to ${fanoutTicks(p.maxFanout, p.maxGeneration)} extra ticks at once; that must be below reservedConcurrency (${p.reservedConcurrency}) so the scheduled tick keeps a slot: lower maxGeneration (${deepestFittingGeneration(p.maxFanout, p.reservedConcurrency)} fits) or maxFanout, or raise reservedConcurrency`,
      });
    }
    for (const name of Object.keys(p.environment)) {
      const variable = constructVariable(name);
      if (variable) {
        ctx.addIssue({
          code: 'custom',
          path: ['environment', name],
          message: `${name} is set by the construct: use ${CONSTRUCT_VARIABLES.get(variable)}${variable === name ? '' : ` (${variable} given as a secret)`}`,
        });
      }
    }
    for (const name of Object.keys(p.environment)) {
      if (SECRET_VALUED_VARIABLES.has(name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['environment', name],
          message: `${name} holds a secret value, and environment puts it in every function's configuration: give it as a Secrets Manager secret with http: { secretEnvironment: { ${name}: secret } } (read by the HTTP function alone)`,
        });
      }
      // Set plainly on the HTTP function (environment may override it plainly): given as a secret too, the function
      // would have X and X_SECRET_ARN, and fail every invocation.
      const base = name.replace(/_SECRET_(ARN|TEMPLATE)$/, '');
      if (base !== name && HTTP_PLAIN_VARIABLES.has(base)) {
        ctx.addIssue({ code: 'custom', path: ['environment', name], message: `${base} is set on the HTTP function by the construct: give it plainly in environment to change it` });
      }
    }
    for (const name of Object.keys(p.http.secretEnvironment)) {
      if (CONSTRUCT_VARIABLES.has(name) || HTTP_PLAIN_VARIABLES.has(name) || name in p.environment) {
        ctx.addIssue({
          code: 'custom',
          path: ['http', 'secretEnvironment', name],
          message: `${name} is already set ${name in p.environment ? 'in environment' : 'by the construct'}`,
        });
      }
    }
    if (p.vpc === undefined && (p.vpcSubnets !== undefined || p.securityGroups !== undefined)) {
      ctx.addIssue({ code: 'custom', path: ['vpc'], message: 'vpcSubnets and securityGroups need a vpc' });
    }
  });

export type WorkhorseTickWorkerProps = z.input<typeof tickWorkerPropsSchema>;
export type ResolvedTickWorkerProps = z.output<typeof tickWorkerPropsSchema>;
export type DatabaseProps = ResolvedTickWorkerProps['database'];

/** Parses the construct's props; throws ConfigError naming every bad field. */
export function parseTickWorkerProps(props: WorkhorseTickWorkerProps): ResolvedTickWorkerProps {
  return parseConfig(tickWorkerPropsSchema, props, 'WorkhorseTickWorker props');
}

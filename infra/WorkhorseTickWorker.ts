// WorkhorseTickWorker: the CDK construct that deploys workhorse's serverless
// shape around one app module. It bundles the app locally with esbuild (no
// Docker) into a tick function run on a schedule, an optional HTTP function
// behind a Function URL (auth NONE; requests are HMAC-signed with a secret
// kept in Secrets Manager), and a deploy-time migration that runs before
// either function is updated. Secrets reach the functions as ARNs only
// (X_SECRET_ARN), read at run time, so no value sits in a function's
// configuration and a rotation needs no redeploy. The migration uses the
// owner credential (`database`), the tick and HTTP functions the runtime one
// (`runtimeDatabase`, a member of workhorse_runtime). IAM is least
// privilege: each function may read only its own secrets and invoke only
// the tick function (fan-out). Every function's logs, the trigger
// provider's included, have a retention. Caveat: reserved concurrency is
// the connection budget: a tick opens at most two connections, an HTTP call
// three.
import { join } from 'node:path';
import { Annotations, Duration, Names, Stack, Stage } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { Connections, SecurityGroup, type ISecurityGroup } from 'aws-cdk-lib/aws-ec2';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction as LambdaTarget } from 'aws-cdk-lib/aws-events-targets';
import { Policy, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import {
  Architecture,
  Function as LambdaFunction,
  FunctionUrlAuthType,
  Runtime,
  type Code,
  type FunctionProps,
  type FunctionUrl,
} from 'aws-cdk-lib/aws-lambda';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Secret, type ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { TriggerFunction } from 'aws-cdk-lib/triggers';
import { Construct } from 'constructs';
import { LAMBDA_RESPONSE_MARGIN_MS } from '../src/http/routes/tick.js';
import { SECRET_ARN_SUFFIX } from '../src/secrets/references.js';
import { DEFAULT_SAFETY_MARGIN_MS } from '../src/tick/options.js';
import { LAMBDA_AWS_CA_BUNDLE, databaseConnection, type DatabaseConnection } from './databaseConnection.js';
import { LAMBDA_HANDLER, lambdaCodeFromEntry } from './lambdaBundle.js';
import { deepestFittingGeneration } from './fanoutBound.js';
import { defaultWorkhorseRoot, locateWorkhorse, resolveAppModule, writeEntry, type EntryKind } from './lambdaEntries.js';
import { bundleBuildId } from './bundleBuild.js';
import { allowSecretReads, environmentSecretArns } from './secretGrants.js';
import { retainTriggerProviderLogs } from './triggerProviderLogs.js';
import { WorkhorseAlarms, type AlarmedFunction } from './workhorseAlarms.js';
import {
  parseTickWorkerProps,
  type ResolvedTickWorkerProps,
  type WorkhorseTickWorkerProps,
} from './workhorseTickWorkerProps.js';

/** The Lambda runtime of every workhorse function. */
export const WORKHORSE_RUNTIME = Runtime.NODEJS_22_X;
/** How long the deploy-time migration may take. */
const MIGRATION_TIMEOUT = Duration.minutes(5);
/** Connections one tick invocation may open (its pool's max). */
const TICK_CONNECTIONS = 2;
/** Connections one HTTP invocation may open (its client's pool, which its tick borrows). */
const HTTP_CONNECTIONS = 3;

export class WorkhorseTickWorker extends Construct {
  /** The scheduled tick function (also the fan-out target). */
  readonly tickFunction: LambdaFunction;
  /** The HTTP function (POST /tick, jobs API); undefined when the HTTP trigger is off. */
  readonly httpFunction: LambdaFunction | undefined;
  readonly functionUrl: FunctionUrl | undefined;
  /** The HMAC signing secret callers of the HTTP function sign with. */
  readonly signingSecret: ISecret | undefined;
  /** The deploy-time migration; runs before the tick and HTTP functions are updated. */
  readonly migrationFunction: TriggerFunction;
  readonly schedule: Rule;
  readonly alarms: Alarm[];
  /** Security groups of the functions when they run in a VPC: allow them into the database. */
  readonly connections: Connections | undefined;
  /** The most connections this deployment opens at once: 2 per tick, 3 per HTTP invocation, 1 for the migration. */
  readonly connectionBudget: number;

  private readonly props: ResolvedTickWorkerProps;
  private readonly securityGroups: ISecurityGroup[] | undefined;
  private readonly commonEnvironment: Record<string, string>;
  /** The runtime credential the tick and HTTP functions connect with. */
  private readonly runtimeDatabase: DatabaseConnection;

  constructor(scope: Construct, id: string, rawProps: WorkhorseTickWorkerProps) {
    // Validate before joining the construct tree, so bad props leave no half-built node.
    const p = parseTickWorkerProps(rawProps);
    super(scope, id);
    this.props = p;
    const ownerDatabase = databaseConnection(p.database);
    this.runtimeDatabase = p.runtimeDatabase ? databaseConnection(p.runtimeDatabase) : ownerDatabase;
    if (!p.runtimeDatabase && ownerDatabase.secret) {
      Annotations.of(this).addWarningV2(
        'workhorse:runtimeDatabase',
        'The tick and HTTP functions use the owner credential that migrates (so they can change the schema): give runtimeDatabase, a login role in workhorse_runtime.',
      );
    }

    if (p.vpc) {
      this.securityGroups = p.securityGroups ?? [
        new SecurityGroup(this, 'SecurityGroup', {
          vpc: p.vpc,
          allowAllOutbound: true,
          description: 'workhorse functions (allow this group into the database)',
        }),
      ];
      this.connections = new Connections({ securityGroups: this.securityGroups });
    }

    // NODE_OPTIONS in environment adds to the construct's source-map flag: it replaced it without a word.
    const nodeOptions = [p.bundling.sourceMap ? '--enable-source-maps' : undefined, p.environment.NODE_OPTIONS].filter((o) => o !== undefined && o !== '');
    this.commonEnvironment = {
      WORKHORSE_NAMESPACE: p.namespace,
      ...(p.trustAwsCertificates ? { NODE_EXTRA_CA_CERTS: LAMBDA_AWS_CA_BUNDLE } : {}),
      ...p.environment,
      ...(nodeOptions.length > 0 ? { NODE_OPTIONS: nodeOptions.join(' ') } : {}),
    };
    const code = this.codeFactory();

    this.migrationFunction = new TriggerFunction(this, 'Migrate', {
      ...this.functionBase('Migrate', code('migrate')),
      description: 'workhorse: applies sql/ migrations at deploy time (owner credential)',
      timeout: MIGRATION_TIMEOUT,
      memorySize: 256,
      executeAfter: p.migrationExecuteAfter,
      environment: { ...this.commonEnvironment, ...ownerDatabase.environment },
    });
    allowSecretReads(this.migrationFunction, ownerDatabase.secret ? [ownerDatabase.secret] : [], environmentSecretArns(p.environment));
    if (!retainTriggerProviderLogs(Stack.of(this), p.logRetention)) {
      Annotations.of(this).addWarningV2('workhorse:triggerLogs', 'CDK trigger provider not found: its log group keeps no retention.');
    }

    this.tickFunction = new LambdaFunction(this, 'Tick', {
      ...this.functionBase('Tick', code('tick')),
      description: `workhorse tick worker (namespace ${p.namespace})`,
      timeout: Duration.seconds(p.timeoutSeconds),
      memorySize: p.memorySize,
      reservedConcurrentExecutions: p.reservedConcurrency,
      // A failed tick is not retried: its leases expire and the next tick recovers them.
      retryAttempts: 0,
      environment: {
        ...this.commonEnvironment,
        ...this.runtimeDatabase.environment,
        ...this.tickEnvironment(),
        // Each scheduled tick publishes Workhorse/ReadyBacklog (an EMF log line) for the backlog alarm.
        WORKHORSE_BACKLOG_METRIC: 'true',
      },
    });
    allowSecretReads(this.tickFunction, this.runtimeDatabase.secret ? [this.runtimeDatabase.secret] : [], environmentSecretArns(p.environment));
    if (p.maxFanout > 0) {
      // A separate policy, not the role's default one: the function depends on
      // its default policy, so naming the function's ARN there would be a cycle.
      new Policy(this, 'TickFanoutPolicy', {
        roles: [this.tickFunction.role!],
        statements: [this.invokeTickStatement()],
      });
    }

    this.schedule = new Rule(this, 'Schedule', {
      description: `workhorse tick cadence (namespace ${p.namespace})`,
      schedule: Schedule.expression(p.schedule),
      targets: [new LambdaTarget(this.tickFunction, { retryAttempts: 0 })],
    });

    if (p.http.enabled) {
      this.signingSecret =
        p.http.signingSecret ??
        new Secret(this, 'SigningSecret', {
          description: 'workhorse: HMAC secret for signed requests to the HTTP function',
          generateSecretString: { passwordLength: 64, excludePunctuation: true },
        });
      this.httpFunction = this.createHttpFunction(code('http'), this.signingSecret);
      this.functionUrl = this.httpFunction.addFunctionUrl({ authType: FunctionUrlAuthType.NONE });
    }

    const workers = [this.tickFunction, this.httpFunction].filter((f) => f !== undefined);
    this.migrationFunction.executeBefore(...workers);
    // Both functions register ticks: they carry one build id, which changes with the code they ship.
    const build = p.environment.WORKHORSE_BUILD === undefined ? bundleBuildId(workers) : undefined;
    if (build !== undefined) for (const fn of workers) fn.addEnvironment('WORKHORSE_BUILD', build);

    this.alarms = p.alarms.enabled ? this.createAlarms() : [];
    this.connectionBudget =
      TICK_CONNECTIONS * p.reservedConcurrency + (p.http.enabled ? HTTP_CONNECTIONS * p.http.reservedConcurrency : 0) + 1;
  }

  /** Writes the entry modules and returns a function that bundles one of them. */
  private codeFactory(): (kind: EntryKind) => Code {
    const p = this.props;
    const sources = locateWorkhorse(p.workhorseRoot ?? defaultWorkhorseRoot());
    const appModule = resolveAppModule(p.app);
    const outdir = Stage.of(this)?.outdir ?? process.cwd();
    const buildDir = join(outdir, '.workhorse-entries', Names.uniqueId(this));
    return (kind) =>
      lambdaCodeFromEntry({
        entryFile: writeEntry(buildDir, kind, appModule, sources),
        sqlDir: sources.sqlDir,
        minify: p.bundling.minify,
        sourceMap: p.bundling.sourceMap,
        external: p.bundling.external,
      });
  }

  /** What every function shares: runtime, code, logs, network. */
  private functionBase(id: string, code: Code): FunctionProps {
    return {
      runtime: WORKHORSE_RUNTIME,
      architecture: Architecture.ARM_64,
      handler: LAMBDA_HANDLER,
      code,
      environment: this.commonEnvironment,
      logGroup: new LogGroup(this, `${id}Logs`, { retention: this.props.logRetention }),
      vpc: this.props.vpc,
      vpcSubnets: this.props.vpc ? this.props.vpcSubnets : undefined,
      securityGroups: this.securityGroups,
    };
  }

  private tickEnvironment(): Record<string, string> {
    const p = this.props;
    return {
      WORKHORSE_HEARTBEAT_MS: String(p.heartbeatMs),
      WORKHORSE_MAX_FANOUT: String(p.maxFanout),
      // One burst's ticks (maxFanout + maxFanout² + …) stay below reservedConcurrency (fanoutBound.ts).
      ...(p.maxFanout > 0 ? { WORKHORSE_MAX_GENERATION: String(p.maxGeneration ?? deepestFittingGeneration(p.maxFanout, p.reservedConcurrency)) } : {}),
      ...(p.safetyMarginMs !== undefined ? { WORKHORSE_SAFETY_MARGIN_MS: String(p.safetyMarginMs) } : {}),
    };
  }

  private invokeTickStatement(): PolicyStatement {
    return new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [this.tickFunction.functionArn] });
  }

  private createHttpFunction(code: Code, signingSecret: ISecret): LambdaFunction {
    const p = this.props;
    // Each variable as a secret ARN, read at run time (src/secrets/).
    const secrets: [string, ISecret | undefined][] = [
      ['WORKHORSE_SIGNING_SECRET', signingSecret],
      ['WORKHORSE_SIGNING_SECRET_NEXT', p.http.signingSecretNext],
      ['WORKHORSE_API_TOKEN', p.http.apiTokenSecret],
      ...Object.entries(p.http.secretEnvironment),
    ];
    const present = secrets.filter((e): e is [string, ISecret] => e[1] !== undefined);
    const fn = new LambdaFunction(this, 'Http', {
      ...this.functionBase('Http', code),
      description: `workhorse HTTP trigger and jobs API (namespace ${p.namespace})`,
      timeout: Duration.seconds(p.http.timeoutSeconds),
      memorySize: p.http.memorySize,
      reservedConcurrentExecutions: p.http.reservedConcurrency,
      environment: {
        // POST /tick may use the whole invocation (less the response margin), not the 10 s off-Lambda
        // default, so a job whose timeout fits the function's timeout runs when an edge function kicks it.
        WORKHORSE_HTTP_TICK_BUDGET_MS: String(p.http.timeoutSeconds * 1000),
        ...this.commonEnvironment,
        ...this.runtimeDatabase.environment,
        ...this.tickEnvironment(),
        // Fan-out from an HTTP-triggered tick starts scheduled-tick invocations.
        WORKHORSE_FANOUT_FUNCTION: this.tickFunction.functionName,
        ...Object.fromEntries(present.map(([name, s]) => [`${name}${SECRET_ARN_SUFFIX}`, s.secretArn])),
      },
    });
    const databaseSecret = this.runtimeDatabase.secret ? [this.runtimeDatabase.secret] : [];
    allowSecretReads(fn, [...databaseSecret, ...present.map(([, s]) => s)], environmentSecretArns(p.environment));
    if (p.maxFanout > 0) fn.addToRolePolicy(this.invokeTickStatement());
    return fn;
  }

  private createAlarms(): Alarm[] {
    const p = this.props;
    // When each has returned at the latest: a tick by its hard stop, a quarter of its safety margin before the
    // timeout (src/tick/plan.ts, runTick.ts: it stops claiming a margin before, aborts its handlers half a margin
    // before, and a tick that aborted a handler returns between the two last), POST /tick by the timeout less
    // its response margin. Planned at the stop of claims, the threshold was the handlers' abort instant: any
    // tick that aborted a handler, on time, raised the alarm.
    const tickReturnsByMs = p.timeoutSeconds * 1000 - Math.floor((p.safetyMarginMs ?? DEFAULT_SAFETY_MARGIN_MS) / 4);
    const functions: AlarmedFunction[] = [{ label: 'Tick', fn: this.tickFunction, timeoutSeconds: p.timeoutSeconds, returnsByMs: tickReturnsByMs }];
    if (this.httpFunction) {
      const returnsByMs = p.http.timeoutSeconds * 1000 - LAMBDA_RESPONSE_MARGIN_MS;
      functions.push({ label: 'Http', fn: this.httpFunction, timeoutSeconds: p.http.timeoutSeconds, returnsByMs });
    }
    return new WorkhorseAlarms(this, 'Alarms', { functions, namespace: p.namespace, options: p.alarms }).alarms;
  }
}

// The WorkhorseTickWorker construct's CloudFormation, read back with
// aws-cdk-lib/assertions. One stack is synthesised for the whole file (with
// asset bundling skipped: bundledLambda.test.ts bundles and runs the code).
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_APP_MODULE } from '../../infra/exampleStack.js';
import { WorkhorseTickWorker } from '../../infra/WorkhorseTickWorker.js';
import { allStatements, asArray, logicalId, newStack, removeTestAssemblies } from './template.js';

afterAll(removeTestAssemblies);

describe('WorkhorseTickWorker', () => {
  let template: Template;
  let worker: WorkhorseTickWorker;
  let tickId: string;
  let httpId: string;
  let dbSecretId: string;
  let runtimeSecretId: string;

  beforeAll(() => {
    const stack = newStack();
    const db = new Secret(stack, 'DatabaseSecret');
    const runtimeDb = new Secret(stack, 'RuntimeDatabaseSecret');
    worker = new WorkhorseTickWorker(stack, 'Workhorse', {
      app: EXAMPLE_APP_MODULE,
      database: { secret: db },
      runtimeDatabase: { secret: runtimeDb },
      timeoutSeconds: 120,
      memorySize: 1024,
      reservedConcurrency: 6,
      maxFanout: 3,
    });
    template = Template.fromStack(stack);
    tickId = logicalId(template, 'AWS::Lambda::Function', 'WorkhorseTick');
    httpId = logicalId(template, 'AWS::Lambda::Function', 'WorkhorseHttp');
    dbSecretId = logicalId(template, 'AWS::SecretsManager::Secret', 'DatabaseSecret', 'RuntimeDatabaseSecret');
    runtimeSecretId = logicalId(template, 'AWS::SecretsManager::Secret', 'RuntimeDatabaseSecret');
  });

  it('runs the tick on Node.js 22 with the configured timeout, memory and reserved concurrency', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('tick worker'),
      Runtime: 'nodejs22.x',
      Handler: 'index.handler',
      Timeout: 120,
      MemorySize: 1024,
      ReservedConcurrentExecutions: 6,
    });
    const fns = template.findResources('AWS::Lambda::Function');
    for (const id of Object.keys(fns).filter((k) => k.startsWith('Workhorse'))) {
      expect(fns[id]!.Properties.Runtime, id).toBe('nodejs22.x');
    }
  });

  it('passes the tick its namespace, heartbeat, fan-out maximum and depth (one burst below the reserved concurrency) and the runtime credential as a secret ARN with its URL template', () => {
    const env = template.findResources('AWS::Lambda::Function')[tickId]!.Properties.Environment.Variables;
    expect(env).toMatchObject({
      WORKHORSE_NAMESPACE: 'default',
      WORKHORSE_HEARTBEAT_MS: '5000',
      WORKHORSE_MAX_FANOUT: '3',
      // 3 extra ticks, and 3 + 9 at two generations: only one generation stays below the 6 reserved.
      WORKHORSE_MAX_GENERATION: '1',
      WORKHORSE_BACKLOG_METRIC: 'true',
      DATABASE_URL_SECRET_ARN: { Ref: runtimeSecretId },
      DATABASE_URL_SECRET_TEMPLATE: 'postgres://{{username}}:{{password}}@{{host}}:{{port}}/{{dbname}}?sslmode=verify-full',
    });
    expect(env.DATABASE_URL).toBeUndefined();
  });

  it('gives the migration the owner credential and no runtime function the owner’s', () => {
    const fns = template.findResources('AWS::Lambda::Function');
    const migrateId = logicalId(template, 'AWS::Lambda::Function', 'WorkhorseMigrate');
    expect(fns[migrateId]!.Properties.Environment.Variables.DATABASE_URL_SECRET_ARN).toEqual({ Ref: dbSecretId });
    for (const id of [tickId, httpId]) expect(JSON.stringify(fns[id]!.Properties.Environment)).not.toContain(dbSecretId);
  });

  it('fires the tick every minute by default, targeting the tick function without retries', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      State: 'ENABLED',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [tickId, 'Arn'] }, RetryPolicy: { MaximumRetryAttempts: 0 } })],
    });
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      Principal: 'events.amazonaws.com',
      FunctionName: { 'Fn::GetAtt': [tickId, 'Arn'] },
    });
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: tickId },
      MaximumRetryAttempts: 0,
    });
  });

  it('serves the HTTP function through a Function URL with auth NONE and a generated signing secret', () => {
    template.hasResourceProperties('AWS::Lambda::Url', {
      AuthType: 'NONE',
      TargetFunctionArn: { 'Fn::GetAtt': [httpId, 'Arn'] },
    });
    const signingId = logicalId(template, 'AWS::SecretsManager::Secret', 'SigningSecret');
    const env = template.findResources('AWS::Lambda::Function')[httpId]!.Properties.Environment.Variables;
    expect(env.WORKHORSE_SIGNING_SECRET_SECRET_ARN).toEqual({ Ref: signingId });
    expect(env.WORKHORSE_SIGNING_SECRET).toBeUndefined();
    expect(env.WORKHORSE_FANOUT_FUNCTION).toEqual({ Ref: tickId });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('HTTP'),
      ReservedConcurrentExecutions: 2,
    });
    expect(worker.functionUrl).toBeDefined();
  });

  it('lets each function get the value of exactly its own secrets, and nothing else in Secrets Manager', () => {
    const reads = allStatements(template).filter(({ statement }) =>
      asArray(statement.Action).some((a: string) => a.startsWith('secretsmanager:')),
    );
    const signingId = logicalId(template, 'AWS::SecretsManager::Secret', 'SigningSecret');
    const byOwner = Object.fromEntries(reads.map(({ owner, statement }) => [owner.replace(/ServiceRoleDefaultPolicy.*/, ''), statement]));
    expect(Object.keys(byOwner).sort()).toEqual(['WorkhorseHttp', 'WorkhorseMigrate', 'WorkhorseTick']);
    for (const statement of Object.values(byOwner)) {
      expect(statement.Effect).toBe('Allow');
      expect(statement.Action).toBe('secretsmanager:GetSecretValue');
    }
    expect(asArray(byOwner.WorkhorseMigrate!.Resource)).toEqual([{ Ref: dbSecretId }]);
    expect(asArray(byOwner.WorkhorseTick!.Resource)).toEqual([{ Ref: runtimeSecretId }]);
    expect(asArray(byOwner.WorkhorseHttp!.Resource)).toEqual([{ Ref: runtimeSecretId }, { Ref: signingId }]);
  });

  it('lets the tick and HTTP functions invoke only the tick function (fan-out)', () => {
    const invokes = allStatements(template).filter(({ statement }) =>
      asArray(statement.Action).includes('lambda:InvokeFunction'),
    );
    const ours = invokes.filter(({ owner }) => owner.startsWith('Workhorse'));
    expect(ours.map((i) => i.owner).sort()).toEqual([
      expect.stringContaining('WorkhorseHttpServiceRoleDefaultPolicy'),
      expect.stringContaining('WorkhorseTickFanoutPolicy'),
    ]);
    for (const { statement } of ours) expect(statement.Resource).toEqual({ 'Fn::GetAtt': [tickId, 'Arn'] });
    // The only other invoke: CDK's trigger provider running the migration function's versions.
    const others = invokes.filter(({ owner }) => !owner.startsWith('Workhorse'));
    const migrateId = logicalId(template, 'AWS::Lambda::Function', 'WorkhorseMigrate');
    for (const { statement } of others) {
      expect(statement.Resource).toEqual([{ 'Fn::Join': ['', [{ 'Fn::GetAtt': [migrateId, 'Arn'] }, ':*']] }]);
    }
    const fanoutPolicy = template.findResources('AWS::IAM::Policy')[
      logicalId(template, 'AWS::IAM::Policy', 'TickFanoutPolicy')
    ]!;
    const tickRoleId = logicalId(template, 'AWS::IAM::Role', 'WorkhorseTickServiceRole');
    expect(fanoutPolicy.Properties.Roles).toEqual([{ Ref: tickRoleId }]);
  });

  it('grants nothing on "*" resources (logging comes from the AWS-managed basic execution policy)', () => {
    const wildcard = allStatements(template).filter(({ statement }) =>
      asArray(statement.Resource).some((r) => r === '*'),
    );
    expect(wildcard).toEqual([]);
    for (const role of Object.values(template.findResources('AWS::IAM::Role'))) {
      expect(JSON.stringify(role.Properties.ManagedPolicyArns)).toContain('AWSLambdaBasicExecutionRole');
      expect(role.Properties.ManagedPolicyArns).toHaveLength(1);
    }
  });

  it('runs the migration trigger before the tick and HTTP functions are created or updated', () => {
    const triggerId = logicalId(template, 'Custom::Trigger', 'WorkhorseMigrate');
    const fns = template.findResources('AWS::Lambda::Function');
    expect(fns[tickId]!.DependsOn).toContain(triggerId);
    expect(fns[httpId]!.DependsOn).toContain(triggerId);
    const trigger = template.findResources('Custom::Trigger')[triggerId]!;
    expect(trigger.Properties.InvocationType).toBe('RequestResponse');
    expect(trigger.Properties.ExecuteOnHandlerChange).toBe(true);
    const migrateId = logicalId(template, 'AWS::Lambda::Function', 'WorkhorseMigrate');
    expect(fns[migrateId]!.Properties.Timeout).toBe(300);
  });

  it('alarms on errors, throttles and duration near the timeout of each function, on the ready backlog and on each alert rule', () => {
    const alarms = template.findResources('AWS::CloudWatch::Alarm');
    expect(Object.keys(alarms)).toHaveLength(7 + 8);
    expect(worker.alarms).toHaveLength(7 + 8);
    for (const rule of ['backlog', 'oldest_ready', 'failure_rate', 'dead_worker', 'unhandled_type', 'stuck_lease', 'slot_missed', 'held_xmin']) {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'Workhorse',
        MetricName: 'OpenAlerts',
        Dimensions: [
          { Name: 'Rule', Value: rule },
          { Name: 'WorkhorseNamespace', Value: 'default' },
        ],
        Statistic: 'Maximum',
        Threshold: 1,
      });
    }
    const tickDims = [{ Name: 'FunctionName', Value: { Ref: tickId } }];
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: tickDims,
      Threshold: 1,
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'Throttles',
      Dimensions: tickDims,
      Threshold: 1,
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'Duration',
      Dimensions: tickDims,
      Statistic: 'Maximum',
      // Half-way between the tick's hard stop (120 s less a quarter of the 1 s safety margin) and its timeout:
      // a tick that works its whole window under a backlog, or aborts a handler on time, stays quiet.
      Threshold: 119_875,
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'Workhorse',
      MetricName: 'ReadyBacklog',
      Dimensions: [{ Name: 'WorkhorseNamespace', Value: 'default' }],
      Threshold: 1000,
      EvaluationPeriods: 3,
    });
  });

  it('keeps each function’s logs (the trigger provider’s too) in its own log group with the configured retention', () => {
    const groups = template.findResources('AWS::Logs::LogGroup');
    expect(Object.keys(groups)).toHaveLength(4);
    for (const g of Object.values(groups)) expect(g.Properties.RetentionInDays).toBe(30);
    const fns = template.findResources('AWS::Lambda::Function');
    expect(fns[tickId]!.Properties.LoggingConfig.LogGroup).toEqual({
      Ref: logicalId(template, 'AWS::Logs::LogGroup', 'TickLogs'),
    });
  });

  it('reports its connection budget: 2 per reserved tick, 3 per reserved HTTP invocation, 1 for the migration', () => {
    expect(worker.connectionBudget).toBe(2 * 6 + 3 * 2 + 1);
  });
});

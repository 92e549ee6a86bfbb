// WorkhorseTickWorker's options: VPC placement, the HTTP trigger and fan-out
// switched off, cadence and retention, and the props it refuses at synth time.
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Vpc } from 'aws-cdk-lib/aws-ec2';
import { afterAll, describe, expect, it } from 'vitest';
import { EXAMPLE_APP_MODULE } from '../../infra/exampleStack.js';
import { WorkhorseTickWorker } from '../../infra/WorkhorseTickWorker.js';
import type { WorkhorseTickWorkerProps } from '../../infra/workhorseTickWorkerProps.js';
import { ConfigError } from '../../src/errors.js';
import { allStatements, asArray, logicalId, newStack, removeTestAssemblies } from './template.js';

afterAll(removeTestAssemblies);

describe('WorkhorseTickWorker options', () => {
  const base = (): WorkhorseTickWorkerProps => ({ app: EXAMPLE_APP_MODULE, database: { url: 'postgres://u:p@db:5432/app' } });

  it('places every function in the VPC with one shared security group the database can admit', () => {
    const stack = newStack();
    const vpc = new Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 1 });
    const w = new WorkhorseTickWorker(stack, 'Workhorse', { ...base(), vpc });
    const t = Template.fromStack(stack);
    const sgId = logicalId(t, 'AWS::EC2::SecurityGroup', 'WorkhorseSecurityGroup');
    const fns = Object.entries(t.findResources('AWS::Lambda::Function')).filter(([id]) => id.startsWith('Workhorse'));
    expect(fns).toHaveLength(3);
    for (const [, fn] of fns) {
      expect(fn.Properties.VpcConfig.SecurityGroupIds).toEqual([{ 'Fn::GetAtt': [sgId, 'GroupId'] }]);
    }
    expect(w.connections?.securityGroups).toHaveLength(1);
  });

  it('without the HTTP trigger creates no Function URL and no signing secret, and with fan-out off no invoke grant', () => {
    const stack = newStack();
    const w = new WorkhorseTickWorker(stack, 'Workhorse', { ...base(), http: { enabled: false } });
    const t = Template.fromStack(stack);
    t.resourceCountIs('AWS::Lambda::Url', 0);
    t.resourceCountIs('AWS::SecretsManager::Secret', 0);
    expect(w.httpFunction).toBeUndefined();
    const invokes = allStatements(t).filter(({ owner, statement }) =>
      owner.startsWith('Workhorse') && asArray(statement.Action).includes('lambda:InvokeFunction'),
    );
    expect(invokes).toEqual([]);
    t.resourceCountIs('AWS::CloudWatch::Alarm', 4 + 8);
  });

  it('takes a custom cadence, a plain database URL and a log retention', () => {
    const stack = newStack();
    new WorkhorseTickWorker(stack, 'Workhorse', { ...base(), schedule: 'cron(0/5 * * * ? *)', logRetention: 7 });
    const t = Template.fromStack(stack);
    t.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'cron(0/5 * * * ? *)' });
    t.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ DATABASE_URL: 'postgres://u:p@db:5432/app' }) },
    });
    for (const g of Object.values(t.findResources('AWS::Logs::LogGroup'))) expect(g.Properties.RetentionInDays).toBe(7);
  });

  // Props are validated before any resource exists, so a secret-shaped object suffices.
  const secret = { secretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:x-AbCdEf', secretValueFromJson: () => undefined } as never;
  const invalid: [string, Partial<WorkhorseTickWorkerProps>, RegExp][] = [
    ['a secretEnvironment variable the construct sets itself', { http: { secretEnvironment: { WORKHORSE_API_TOKEN: secret } } }, /http\.secretEnvironment\.WORKHORSE_API_TOKEN: WORKHORSE_API_TOKEN is already set by the construct/],
    ['a secretEnvironment variable also in environment', { environment: { TOKENS: 'x' }, http: { secretEnvironment: { TOKENS: secret } } }, /TOKENS is already set in environment/],
    ['a secretEnvironment name that is no variable name', { http: { secretEnvironment: { 'not a name': secret } } }, /http\.secretEnvironment\.not a name: Invalid key/],
    ['a JSON field no template can name', { database: { secret, shape: 'json', field: 'the url' } }, /database\.field: a JSON field name/],
    ['a timeout over 900 s', { timeoutSeconds: 901 }, /timeoutSeconds: Lambda allows at most 900 seconds/],
    ['a heartbeat not below the timeout', { timeoutSeconds: 30, heartbeatMs: 30_000 }, /heartbeatMs \(30000\) must leave the tick 1000 ms of its timeout \(30000 ms\): at most 29000/],
    // An invocation starts with less than its timeout left: these failed every tick at run time.
    ['a heartbeat a millisecond below the timeout', { timeoutSeconds: 30, heartbeatMs: 29_999, http: { enabled: false } }, /heartbeatMs \(29999\) must leave the tick 1000 ms/],
    ['a safety margin a millisecond below the timeout', { timeoutSeconds: 60, safetyMarginMs: 59_999 }, /safetyMarginMs \(59999\) must leave the tick 1000 ms of its timeout \(60000 ms\)/],
    ['a tick variable in environment the tick would refuse', { environment: { WORKHORSE_CONCURRENCY: 'abc' } }, /environment\.WORKHORSE_CONCURRENCY: .*whole number/],
    ['a negative reserved concurrency', { reservedConcurrency: -1 }, /reservedConcurrency: must be at least 1/],
    ['a fan-out that leaves the schedule no slot', { reservedConcurrency: 3, maxFanout: 3 }, /maxFanout \(3\) must be below reservedConcurrency \(3\)/],
    // Each generation fans out again: 2 + 4 ticks at once where the check counted 2.
    ['fan-out generations without fan-out', { maxGeneration: 2 }, /maxGeneration: maxGeneration bounds fan-out, which is off \(maxFanout 0\)/],
    ['fan-out generations whose burst leaves the schedule no slot', { reservedConcurrency: 5, maxFanout: 2, maxGeneration: 2 }, /maxGeneration: maxFanout 2 over 2 generations starts up to 6 extra ticks at once; .*reservedConcurrency \(5\).*\(1 fits\)/],
    ['a malformed schedule', { schedule: 'every minute' }, /schedule: expected rate\(\.\.\.\) or cron\(\.\.\.\)/],
    ['a database that is not a postgres URL', { database: { url: 'mysql://db/app' } }, /database\.url: expected a postgres:\/\/ or postgresql:\/\/ connection URL/],
    ['a database given neither as a URL nor as a secret', { database: {} as never }, /database: give either \{ url \} or \{ secret \}/],
    ['a misspelt prop', { timout: 60 } as never, /Unrecognized key: "timout"/],
    ['a missing app module', { app: '/nonexistent/app.ts' }, /app module .* does not exist/],
  ];
  for (const [what, override, message] of invalid) {
    it(`rejects ${what} at synth time with a ConfigError naming the field`, () => {
      const make = () => new WorkhorseTickWorker(newStack(), 'Workhorse', { ...base(), ...override });
      expect(make).toThrow(ConfigError);
      expect(make).toThrow(message);
    });
  }
});

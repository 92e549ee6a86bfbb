// The construct's `schedule` is checked at synth as EventBridge checks it at
// deploy: expressions CloudFormation would refuse half-way through a
// deployment (a plural unit for 1, a 5-field Unix cron, both day fields set)
// fail `cdk synth` with a ConfigError saying how to write them, and the
// expressions EventBridge takes reach the rule unchanged.
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { EXAMPLE_APP_MODULE } from '../../infra/exampleStack.js';
import { WorkhorseTickWorker } from '../../infra/WorkhorseTickWorker.js';
import { ConfigError } from '../../src/errors.js';
import { newStack, removeTestAssemblies } from './template.js';

afterAll(removeTestAssemblies);

const worker = (schedule: string) => {
  const stack = newStack();
  new WorkhorseTickWorker(stack, 'Workhorse', { app: EXAMPLE_APP_MODULE, database: { url: 'postgres://u:p@db:5432/app' }, schedule });
  return stack;
};

describe('the schedule expression', () => {
  const refused: [string, RegExp][] = [
    ['rate(1 minutes)', /schedule: write rate\(1 minute\): EventBridge wants the singular unit for 1/],
    ['rate(5 minute)', /schedule: write rate\(5 minutes\): EventBridge wants the plural unit above 1/],
    ['rate(0 minutes)', /schedule: a rate is at least 1/],
    ['rate(30 seconds)', /schedule: "seconds" is not a rate unit/],
    ['cron(*/5 * * * *)', /schedule: an EventBridge cron has 6 fields .*, not 5/],
    ['cron(0 12 * * * *)', /schedule: put "\?" in exactly one of day-of-month and day-of-week/],
    ['cron(0 12 ? * ? *)', /schedule: put "\?" in exactly one of day-of-month and day-of-week/],
    ['every minute', /schedule: expected rate\(\.\.\.\) or cron\(\.\.\.\)/],
  ];
  for (const [expression, message] of refused) {
    it(`refuses ${expression} at synth with a ConfigError`, () => {
      expect(() => worker(expression)).toThrow(ConfigError);
      expect(() => worker(expression)).toThrow(message);
    });
  }

  it('passes the expressions EventBridge accepts to the rule as they are', () => {
    for (const expression of ['rate(1 minute)', 'rate(5 minutes)', 'cron(0 3 * * ? *)', 'cron(0/5 8-18 ? * MON-FRI *)']) {
      Template.fromStack(worker(expression)).hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: expression });
    }
  }, 120_000);
});

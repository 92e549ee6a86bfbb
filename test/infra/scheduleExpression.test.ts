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
    // Each field's values in its range (these passed synth and failed the deployment).
    ['cron(60 3 * * ? *)', /schedule: minutes: "60" is not a value of minutes \(0-59\)/],
    ['cron(0 24 * * ? *)', /schedule: hours: "24" is not a value of hours \(0-23\)/],
    ['cron(0 3 32 * ? *)', /schedule: day-of-month: "32"/],
    ['cron(0 3 * 13 ? *)', /schedule: month: "13" is not a value of month \(1-12 or JAN-DEC\)/],
    ['cron(0 3 ? * 8 *)', /schedule: day-of-week: "8"/],
    ['cron(0 3 * * ? 1969)', /schedule: year: "1969" is not a value of year \(1970-2199\)/],
    ['cron(x 3 * * ? *)', /schedule: minutes: "x"/],
    ['cron(0/0 3 * * ? *)', /schedule: minutes: "0\/0": the step after "\/" is a whole number of at least 1/],
    ['cron(0 ? * * ? *)', /schedule: "\?" is only for day-of-month or day-of-week, not hours/],
  ];
  for (const [expression, message] of refused) {
    it(`refuses ${expression} at synth with a ConfigError`, () => {
      expect(() => worker(expression)).toThrow(ConfigError);
      expect(() => worker(expression)).toThrow(message);
    });
  }

  it('passes the expressions EventBridge accepts to the rule as they are', () => {
    for (const expression of ['rate(1 minute)', 'rate(5 minutes)', 'cron(0 3 * * ? *)', 'cron(0/5 8-18 ? * MON-FRI *)', 'cron(15,45 0-23/2 L * ? 2026-2199)', 'cron(0 9 ? JAN-MAR 2#1 *)', 'cron(0 9 15W * ? *)', 'cron(0 9 ? * 6L *)', 'cron(0 9 ? * MON#1 *)', 'cron(0 9 ? * FRIL *)', 'cron(0 9 L-2 * ? *)']) {
      Template.fromStack(worker(expression)).hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: expression });
    }
  }, 120_000);
});

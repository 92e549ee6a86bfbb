// The duration alarm's threshold. A tick under a backlog works until its
// deadline less the safety margin by design, so the default threshold sits
// half-way between that and the timeout: a 90 % threshold fired on every
// busy minute. An explicit alarms.durationRatio still sets a share of the
// timeout.
import { describe, expect, it } from 'vitest';
import { durationThresholdMs } from '../../infra/workhorseAlarms.js';

describe('the duration alarm threshold', () => {
  it('is half-way between when the function plans to return and its timeout, unless a ratio is given', () => {
    expect(durationThresholdMs({ timeoutSeconds: 60, returnsByMs: 59_000 }, undefined)).toBe(59_500);
    expect(durationThresholdMs({ timeoutSeconds: 900, returnsByMs: 895_000 }, undefined)).toBe(897_500);
    expect(durationThresholdMs({ timeoutSeconds: 60, returnsByMs: 59_000 }, 0.9)).toBe(54_000);
  });
});

describe("the tick function's duration alarm", () => {
  it('sits past the hard stop, so a tick that aborted a handler at its abort instant and returned on time stays quiet', async () => {
    const { Template } = await import('aws-cdk-lib/assertions');
    const { Secret } = await import('aws-cdk-lib/aws-secretsmanager');
    const { EXAMPLE_APP_MODULE } = await import('../../infra/exampleStack.js');
    const { WorkhorseTickWorker } = await import('../../infra/WorkhorseTickWorker.js');
    const { newStack, removeTestAssemblies } = await import('./template.js');
    try {
      const stack = newStack();
      new WorkhorseTickWorker(stack, 'Workhorse', { app: EXAMPLE_APP_MODULE, database: { secret: new Secret(stack, 'Db') }, timeoutSeconds: 60, safetyMarginMs: 2000 });
      const alarms = Object.values(Template.fromStack(stack).findResources('AWS::CloudWatch::Alarm')) as { Properties: { AlarmName?: string; AlarmDescription?: string; Threshold: number } }[];
      const tick = alarms.find((a) => /Tick function: an invocation ran/.test(a.Properties.AlarmDescription ?? ''));
      expect(tick, JSON.stringify(alarms.map((a) => a.Properties.AlarmDescription))).toBeDefined();
      // Claims stop at 58,000 ms, handlers are aborted at 59,000, the hard stop is at 59,500: half-way from there to 60,000.
      expect(tick?.Properties.Threshold).toBe(59_750);
    } finally {
      removeTestAssemblies();
    }
  }, 60_000);
});

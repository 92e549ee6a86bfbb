// A value no option of a union takes is named with what is wrong with it:
// an alert threshold of the wrong type was "alerts.rules.backlog: Invalid
// input" (its rule takes `false` or an object of thresholds), naming neither
// the field nor the problem.
import { expect, it } from 'vitest';
import { parseAlertsOptions } from '../../src/alerts/alertsOptions.js';
import { ConfigError } from '../../src/errors.js';

const refusal = (rules: unknown): string => {
  try {
    parseAlertsOptions({ rules } as never);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('accepted');
};

it('names the threshold inside a rule that is wrong', () => {
  expect(refusal({ backlog: { max: 1.5 } })).toMatch(/rules\.backlog\.max: .*expected int/);
  expect(refusal({ backlog: { max: '500' } })).toMatch(/rules\.backlog\.max: .*expected number, received string/);
  expect(refusal({ dead_worker: { missedHeartbeats: 2.5 } })).toMatch(/rules\.dead_worker\.missedHeartbeats: .*expected int/);
});

it('says what a rule takes when the rule itself is of the wrong type', () => {
  for (const v of [null, true, '500']) {
    expect(refusal({ backlog: v })).toMatch(/rules\.backlog: Invalid input: expected false, or expected object/);
  }
});

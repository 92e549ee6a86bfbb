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

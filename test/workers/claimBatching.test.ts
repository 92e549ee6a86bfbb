// The claim loop's room: running handlers and buffered leases count; jobs
// whose settlement is in flight count (only while their writes are failing:
// the core passes them then) past two capacities' worth. Claims overlap a
// batch's settlement, but a worker whose settlements keep failing stops
// claiming at about three times its capacity held (one under
// a 3 ms statement_timeout held 1,508 leases at concurrency 20, running jobs
// whose outcomes it could not write); the drains of the worker tests show
// the loop claims again once settlements catch up.
import { describe, expect, it } from 'vitest';
import { freeRoom, settlingCap } from '../../src/worker/claimBatching.js';

const c = { concurrency: 20, prefetch: 0 };

describe('freeRoom', () => {
  it('is the capacity less running and buffered leases', () => {
    expect(freeRoom(c, 0, 0)).toBe(20);
    expect(freeRoom({ concurrency: 24, prefetch: 476 }, 24, 100)).toBe(376);
  });

  it('lets claims overlap up to two capacities of settlements in flight', () => {
    expect(settlingCap(c)).toBe(40);
    expect(freeRoom(c, 0, 0, 40)).toBe(20);
    expect(freeRoom(c, 5, 0, 40)).toBe(15);
  });

  it('stops claiming once settlements pile up past that: at three capacities held', () => {
    expect(freeRoom(c, 0, 0, 50)).toBe(10);
    expect(freeRoom(c, 0, 0, 60)).toBe(0);
    expect(freeRoom(c, 5, 0, 60)).toBeLessThan(0);
  });
});

// Worker timing from its options: the fleet defaults (45 s heartbeat, 180 s
// lease, dead after 315 s), a lease of four heartbeats when only heartbeatMs
// is given, a heartbeat of a third of leaseMs when only that is given, and
// the option errors a user gets (a heartbeat not shorter than the lease,
// a misspelt key, a poll cap below the poll).
import { describe, expect, it } from 'vitest';
import { ConfigError, workerTiming } from '../../src/index.js';
import { resolveWorkerOptions, workerOptionsSchema } from '../../src/worker/options.js';
import { parseConfig } from '../../src/validation.js';

const resolve = (o: unknown) => resolveWorkerOptions(parseConfig(workerOptionsSchema, o, 'worker options'));

function configError(o: unknown): ConfigError {
  try {
    resolve(o);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error(`accepted ${JSON.stringify(o)}`);
}

describe('worker timing', () => {
  it('keeps the fleet defaults: 45 s heartbeat, 180 s lease, dead after 315 s', () => {
    expect(workerTiming({})).toEqual({ heartbeatMs: 45_000, leaseMs: 180_000, deadAfterMs: 315_000 });
    expect(resolve({})).toMatchObject({ heartbeatMs: 45_000, leaseMs: 180_000, registryIntervalMs: 5_000, pollMs: 1_000, maxPollMs: 5_000 });
  });

  it('makes the lease four heartbeats when only heartbeatMs is given', () => {
    expect(workerTiming({ heartbeatMs: 1_000 })).toEqual({ heartbeatMs: 1_000, leaseMs: 4_000, deadAfterMs: 7_000 });
    // The registry refresh is never slower than the heartbeat.
    expect(resolve({ heartbeatMs: 1_000 })).toMatchObject({ registryIntervalMs: 1_000 });
  });

  it('makes the heartbeat a third of leaseMs when only leaseMs is given; dead after seven of those heartbeats', () => {
    expect(workerTiming({ leaseMs: 30_000 })).toEqual({ heartbeatMs: 10_000, leaseMs: 30_000, deadAfterMs: 70_000 });
    expect(resolve({ leaseMs: 30_000, registryIntervalMs: 250 })).toMatchObject({ heartbeatMs: 10_000, leaseMs: 30_000, registryIntervalMs: 250 });
  });

  it('keeps a heartbeat derived from a long leaseMs within the longest heartbeatMs takes (an hour), as given explicitly', () => {
    const longest = workerTiming({ leaseMs: 14_400_000 });
    expect(longest).toEqual({ heartbeatMs: 3_600_000, leaseMs: 14_400_000, deadAfterMs: 25_200_000 });
    expect(workerTiming({ heartbeatMs: longest.heartbeatMs, leaseMs: longest.leaseMs })).toEqual(longest);
    expect(workerTiming({ leaseMs: 10_800_000 }).heartbeatMs).toBe(3_600_000);
  });

  it('takes both when the heartbeat is shorter than the lease, and refuses one that is not', () => {
    expect(workerTiming({ heartbeatMs: 2_000, leaseMs: 30_000 })).toEqual({ heartbeatMs: 2_000, leaseMs: 30_000, deadAfterMs: 14_000 });
    const err = configError({ heartbeatMs: 30_000, leaseMs: 30_000 });
    expect(err.issues).toEqual([{ path: ['heartbeatMs'], message: expect.stringMatching(/shorter than leaseMs/) }]);
  });

  it('refuses a misspelt option and a poll cap below the poll, naming them', () => {
    expect(configError({ leaseMS: 30_000 }).message).toMatch(/leaseMS/);
    expect(configError({ pollMs: 1_000, maxPollMs: 500 }).issues[0]).toMatchObject({ path: ['maxPollMs'] });
    expect(configError({ leaseMs: 100 }).issues[0]).toMatchObject({ path: ['leaseMs'] });
  });

  it('refuses a workerId its schedule runner could not register under (over 186 characters) when the worker is built, not at run()', () => {
    expect(configError({ workerId: 'w'.repeat(187) }).issues[0]).toMatchObject({ path: ['workerId'], message: expect.stringMatching(/at most 186 characters/) });
    expect(resolve({ workerId: 'w'.repeat(186) }).workerId).toHaveLength(186);
  });
});

describe('workerTiming refuses what a Worker refuses', () => {
  function timingError(o: unknown): ConfigError {
    try {
      workerTiming(o as Parameters<typeof workerTiming>[0]);
    } catch (err) {
      if (err instanceof ConfigError) return err;
      throw err;
    }
    throw new Error(`workerTiming accepted ${JSON.stringify(o)}`);
  }

  it('refuses a heartbeat not shorter than the lease with the worker options error', () => {
    for (const o of [{ heartbeatMs: 5_000, leaseMs: 5_000 }, { heartbeatMs: 6_000, leaseMs: 5_000 }]) {
      const err = timingError(o);
      expect(err.message).toMatch(/^invalid worker timing: heartbeatMs: heartbeatMs must be shorter than leaseMs/);
      expect(err.issues).toEqual(configError(o).issues);
    }
  });

  it('refuses non-integer, negative and out-of-range values within the worker bounds, naming the field', () => {
    for (const o of [{ heartbeatMs: 1.5 }, { heartbeatMs: -1 }, { heartbeatMs: 49 }, { heartbeatMs: 3_600_001 }, { leaseMs: 149 }, { leaseMs: 4 * 3_600_000 + 1 }, { leaseMs: Number.NaN }, { heartbeatMs: '5000' }]) {
      const err = timingError(o);
      const field = Object.keys(o)[0]!;
      expect(err.issues[0]).toMatchObject({ path: [field] });
      expect(err.issues).toEqual(configError(o).issues);
    }
    // The bounds themselves are accepted, as a Worker accepts them.
    expect(workerTiming({ heartbeatMs: 50 }).heartbeatMs).toBe(50);
    expect(workerTiming({ leaseMs: 150 })).toEqual({ heartbeatMs: 50, leaseMs: 150, deadAfterMs: 350 });
  });

  it('refuses a key other than heartbeatMs and leaseMs, and a value that is not an object', () => {
    expect(timingError({ leaseMS: 30_000 }).message).toMatch(/unknown key "leaseMS"/);
    expect(timingError({ concurrency: 5 }).issues[0]).toMatchObject({ path: ['concurrency'] });
    expect(timingError(null).message).toMatch(/expected \{ heartbeatMs\?, leaseMs\? \}/);
  });
});

// A bad definition fails where it is written: defineJob refuses unknown keys
// (in the definition and in its retry policy), a ConfigError naming the key.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../../src/client/defineJob.js';
import { ConfigError } from '../../src/errors.js';

function configError(f: () => unknown): ConfigError {
  let thrown: unknown;
  try {
    f();
  } catch (err) {
    thrown = err;
  }
  expect(thrown).toBeInstanceOf(ConfigError);
  return thrown as ConfigError;
}

describe('defineJob', () => {
  it('refuses an unknown key in the definition or in its retry policy, naming it', () => {
    expect(configError(() => defineJob({ type: 'a', schema: z.any(), timeout: 5000 } as never)).message).toContain('Unrecognized key: "timeout"');
    const retry = configError(() => defineJob({ type: 'a', schema: z.any(), retry: { maxAttemps: 5 } } as never));
    expect(retry.issues[0]!.path).toEqual(['retry']);
    expect(retry.message).toContain('"maxAttemps"');
  });
});

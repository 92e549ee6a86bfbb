// A handler's error is stored with its stack's frames: the stack was cut to
// 12 lines, so an error whose message spans many lines (a ZodError lists its
// issues) was stored with no frame at all, and a deep stack lost its frames
// past the eleventh, where the docs promise 8192 characters.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { errorToJson, MAX_ERROR_TEXT } from '../../src/errorJson.js';

function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

const frames = (stack: string | undefined) => (stack ?? '').split('\n').filter((l) => /^\s+at /.test(l)).length;

describe('a stored stack', () => {
  it('keeps the frames of an error whose message spans many lines, its header cut to the first line', () => {
    const err = thrown(() => z.object({ a: z.number(), b: z.string(), c: z.boolean() }).parse({})) as Error;
    expect(err.message.split('\n').length).toBeGreaterThan(12);
    const stored = errorToJson(err);
    expect(stored.message).toBe(err.message);
    expect(frames(stored.stack)).toBe(frames(err.stack));
    expect(frames(stored.stack)).toBeGreaterThan(0);
    expect(stored.stack!.split('\n')[0]).toMatch(/^ZodError: \[ …\(\d+ more lines of the message\)$/);
  });

  it('keeps every frame of a deep stack within 8192 characters', () => {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 40;
    try {
      const deep = (n: number): never => (n === 0 ? (() => { throw new Error('deep'); })() : deep(n - 1));
      const err = thrown(() => deep(30)) as Error;
      expect(frames(err.stack)).toBeGreaterThan(30);
      expect(err.stack!.length).toBeLessThan(MAX_ERROR_TEXT);
      expect(errorToJson(err).stack).toBe(err.stack);
    } finally {
      Error.stackTraceLimit = limit;
    }
  });

  it('cuts a longer one at 8192 characters', () => {
    const err = new Error('long');
    err.stack = `Error: long\n${'    at f (file.js:1:1)\n'.repeat(1000)}`;
    // At most 8192 characters, the "…" that says it was cut included (it was one more).
    expect(errorToJson(err).stack).toHaveLength(MAX_ERROR_TEXT);
    expect(errorToJson(err).stack!.endsWith('…')).toBe(true);
  });

  it('keeps the frames of an error whose one-line message is longer than the limit', () => {
    const err = new Error('m'.repeat(9_000));
    const stored = errorToJson(err);
    expect(frames(stored.stack)).toBe(frames(err.stack));
    expect(stored.stack!.split('\n')[0]).toMatch(/^Error: m{993}…$/);
    expect(stored.message).toHaveLength(MAX_ERROR_TEXT);
  });
});

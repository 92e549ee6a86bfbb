// An integer between two bounds, checked so that a value out of range is
// one issue naming the bound it broke. zod's .int() also refuses anything
// beyond the safe integer range, so `1e20` against .int().max(n) was two
// issues for one mistake ("expected int to be <=9007199254740991" and
// "expected number to be <=n"); here the bounds are checked first and stop
// the checks that follow.
import * as z from 'zod';

export function boundedInt(min: number, max: number, messages: { min?: string; max?: string } = {}): z.ZodNumber {
  return z
    .number()
    .min(min, { abort: true, ...(messages.min ? { error: messages.min } : {}) })
    .max(max, { abort: true, ...(messages.max ? { error: messages.max } : {}) })
    .int();
}

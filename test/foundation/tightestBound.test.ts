// A number past both an integer's safe range and its field's own maximum
// (`delayMs: 1e20`) failed both checks, and the message named both bounds
// ("<=9007199254740991; delayMs: ... <=31622400000"). Only the tightest
// bound a value broke on each side is named now.
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { parseInput } from '../../src/validation.js';

const schema = z.object({ delayMs: z.number().int().min(0).max(31_622_400_000), name: z.string().min(3).max(5) });

function message(value: unknown): string {
  try {
    parseInput(schema, value, 'options');
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected a ValidationError');
}

describe('a value past several bounds', () => {
  it('names only the tightest bound it broke, on either side', () => {
    expect(message({ delayMs: 1e20, name: 'abcd' })).toBe('invalid options: delayMs: Too big: expected number to be <=31622400000');
    expect(message({ delayMs: -1e20, name: 'abcd' })).toBe('invalid options: delayMs: Too small: expected number to be >=0');
  });

  it('keeps the message a schema gave a bound equal to the built-in one', () => {
    const id = z.object({ id: z.number().int().positive().max(Number.MAX_SAFE_INTEGER, 'must be a safe integer; pass larger ids as strings') });
    expect(() => parseInput(id, { id: 2 ** 60 }, 'ids')).toThrow('invalid ids: id: must be a safe integer; pass larger ids as strings');
  });

  it('keeps the issues of other fields and of other kinds', () => {
    expect(message({ delayMs: 1.5, name: 'abcdefgh' })).toBe(
      'invalid options: delayMs: Invalid input: expected int, received number; name: Too big: expected string to have <=5 characters',
    );
  });
});

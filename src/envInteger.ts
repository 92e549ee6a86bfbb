// A whole number read from an environment variable: the text must be
// digits (an optional leading minus, surrounding spaces ignored). "abc",
// "1e3", "0x10" and "4.5" are refused with a message quoting what was set,
// never coerced (z.coerce.number() turned "abc" into NaN and reported
// "received NaN", and read "1e3" as 1000). Range checks pipe after it.
import * as z from 'zod';

export function envInteger() {
  return z
    .string()
    .trim()
    .regex(/^-?[0-9]{1,15}$/, { error: (iss) => `expected a whole number, not ${JSON.stringify(iss.input)}` })
    .transform(Number);
}

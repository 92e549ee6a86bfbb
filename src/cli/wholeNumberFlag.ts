// A numeric command-line flag: the text must be a whole number written in
// digits ("abc", "", "1e3" and "0x10" are refused with a message saying
// what was expected, never coerced), then checked against its range.
import * as z from 'zod';

/** `what`: the flag's unit in the message, e.g. "milliseconds". */
export function wholeNumberFlag(what: string, min: number, max: number) {
  return z
    .string()
    .regex(/^[0-9]{1,15}$/, `expected a whole number of ${what}`)
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
}

/** A port flag: 0 (any free port) to 65535, written in digits. */
export function portFlag() {
  return z
    .string()
    .regex(/^[0-9]{1,5}$/, 'expected a port number from 0 to 65535')
    .transform(Number)
    .pipe(z.number().int().max(65535, 'expected a port number from 0 to 65535'));
}

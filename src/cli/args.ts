// Argument parsing shared by the commands: node's parseArgs for the syntax,
// zod for the values, a ValidationError naming the flag for bad input.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { z } from 'zod';
import { ValidationError } from '../errors.js';
import { parseInput } from '../validation.js';

export function parseFlags<S extends z.ZodType>(
  argv: string[],
  options: NonNullable<ParseArgsConfig['options']>,
  schema: S,
  command: string,
): { flags: z.output<S>; positionals: string[] } {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new ValidationError(`workhorse ${command}: ${(err as Error).message}`);
  }
  return { flags: parseInput(schema, parsed.values, `arguments of \`workhorse ${command}\``), positionals: parsed.positionals };
}

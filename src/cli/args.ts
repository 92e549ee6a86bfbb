// Argument parsing shared by the commands: node's parseArgs for the syntax,
// a count check for the positional arguments, a flag that takes a value
// given once at most, zod for the values. Every
// problem is a UsageError naming the flag or argument, without the command
// prefix (main adds it once).
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { z } from 'zod';
import { toIssues } from '../validation.js';
import { UsageError } from './usageError.js';

export interface CommandLineSpec {
  options: NonNullable<ParseArgsConfig['options']>;
  /** Names of the positional arguments, in order (shown in messages). */
  positionals?: string[];
  /** How many of them must be given. Default: none. */
  required?: number;
  /** The last one may be given any number of times (`retry <id> [<id> ...]`). */
  repeatLast?: boolean;
}

/**
 * The first sentence of node's parseArgs message (the rest is advice about
 * `--`), and for a value that starts with "-" (`--concurrency -1`, which
 * parseArgs calls ambiguous) how to write it.
 */
function parseArgsMessage(err: Error): string {
  const first = err.message.split(/\.\s/)[0]!.replace(/\.$/, '');
  const ambiguous = /^Option '(--[^']+)' argument is ambiguous/.exec(first);
  if (ambiguous) return `option '${ambiguous[1]}' is followed by a value starting with "-": write it as ${ambiguous[1]}=<value>`;
  // `jobs show -1`: a negative number reads as a short option to parseArgs; say what it is.
  const negative = /^Unknown option '(-[0-9][^']*)'/.exec(first);
  if (negative) return `"${negative[1]}" is a negative number, which no argument takes (ids and counts are whole numbers from 1)`;
  return first.charAt(0).toLowerCase() + first.slice(1);
}

/** A flag that takes one value given twice (`--port 8080 --port 8081`): which one was meant is not ours to guess. */
function refuseRepeats(tokens: { kind: string; name?: string; rawName?: string }[], options: CommandLineSpec['options']): void {
  const seen = new Set<string>();
  for (const t of tokens) {
    if (t.kind !== 'option' || !t.name) continue;
    const o = options[t.name];
    if (!o || o.multiple || o.type !== 'string') continue;
    if (seen.has(t.name)) throw new UsageError(`option '--${t.name}' is given more than once: give it once`);
    seen.add(t.name);
  }
}

export function parseCommandLine<S extends z.ZodType>(argv: string[], spec: CommandLineSpec, schema: S): { flags: z.output<S>; positionals: string[] } {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: spec.options, allowPositionals: true, strict: true, tokens: true });
  } catch (err) {
    throw new UsageError(parseArgsMessage(err as Error));
  }
  refuseRepeats(parsed.tokens, spec.options);
  const names = spec.positionals ?? [];
  const { positionals } = parsed;
  if (positionals.length > names.length && !spec.repeatLast) {
    const extra = positionals.slice(names.length).map((p) => `"${p}"`).join(', ');
    throw new UsageError(`unexpected argument${positionals.length - names.length > 1 ? 's' : ''} ${extra}`);
  }
  const missing = names.slice(positionals.length, spec.required ?? 0);
  if (missing.length > 0) throw new UsageError(`missing ${missing.map((n) => `<${n}>`).join(' ')}`);
  const r = schema.safeParse(parsed.values);
  if (!r.success) {
    // A repeatable flag's value is named by the flag alone (`--queue`, not `--queue.0`).
    throw new UsageError(toIssues(r.error).map((i) => (i.path.length ? `--${String(i.path[0])}: ${i.message}` : i.message)).join('; '));
  }
  return { flags: r.data, positionals };
}

// The rule createClient and createWorkhorseAdapter share for where the
// database is: exactly one of `connectionString` or `pool`. Its own module so
// the message is one text: a `connectionString` read from DATABASE_URL with
// the variable unset arrives as a present key holding undefined, and is told
// so instead of "give exactly one of connectionString or pool".
import type * as z from 'zod';

export function oneConnectionTarget(o: { connectionString?: string | undefined; pool?: unknown }, ctx: z.RefinementCtx): void {
  if (o.connectionString && o.pool) {
    ctx.addIssue({ code: 'custom', path: ['connectionString'], message: 'give exactly one of connectionString or pool, not both' });
  } else if (o.connectionString === undefined && !o.pool) {
    // An empty string is not undefined: the string's own schema says it is empty.
    const message =
      'connectionString' in o
        ? 'connectionString is undefined (is DATABASE_URL set?)'
        : 'give exactly one of connectionString or pool';
    ctx.addIssue({ code: 'custom', path: ['connectionString'], message });
  }
}

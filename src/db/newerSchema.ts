// The migrator's downgrade guard. A database that records a numbered
// migration this code does not have was migrated by newer code: migrating it
// again from here would drop every protocol function (protocol/reset.sql)
// and put back this code's older bodies, breaking the newer fleet that
// runs against it. So the migrator refuses before it changes anything and
// says which versions are involved.
import { SchemaVersionError } from '../errors.js';
import type { Migration } from './sqlFiles.js';

/** Throws SchemaVersionError when `applied` holds a version that `known` does not. */
export function refuseNewerSchema(applied: ReadonlySet<number>, known: readonly Migration[]): void {
  const versions = new Set(known.map((m) => m.version));
  const unknown = [...applied].filter((v) => !versions.has(v));
  if (unknown.length === 0) return;
  throw new SchemaVersionError(Math.max(...applied), Math.max(0, ...versions), {
    detail: `the database records migration${unknown.length > 1 ? 's' : ''} ${unknown.sort((a, b) => a - b).join(', ')} that this code does not have; nothing was changed`,
  });
}

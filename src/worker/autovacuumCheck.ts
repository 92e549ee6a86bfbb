// A worker process checks once, at start, that the server vacuums the
// queue's tables. Every claim, settlement and lease leaves dead rows behind
// (a job's lease is a row inserted and deleted); with autovacuum off (the
// server's `autovacuum` or `track_counts`, or a table's own
// `autovacuum_enabled = false`) they are never cleared: the tables grow
// whatever the retention, and claims slow down as they walk them. Nothing
// else says so; the process logs one line and runs on.
import type { Queryable } from '../db/queryable.js';

/** The warning to log, or undefined when the server vacuums the workhorse tables (or could not be asked). */
export async function autovacuumWarning(db: Queryable): Promise<string | undefined> {
  let row: { autovacuum: string; track_counts: string; off: string[] } | undefined;
  try {
    const r = await db.query<{ autovacuum: string; track_counts: string; off: string[] }>(
      `select current_setting('autovacuum') as autovacuum, current_setting('track_counts') as track_counts,
              coalesce((select array_agg(c.relname::text order by c.relname) from pg_class c join pg_namespace n on n.oid = c.relnamespace
                         where n.nspname = 'workhorse' and c.relkind = 'r' and c.reloptions @> array['autovacuum_enabled=false']), '{}') as off`,
    );
    row = r.rows[0];
  } catch {
    return undefined; // a check, not a requirement: a server that will not say is not refused
  }
  if (!row) return undefined;
  const what =
    row.autovacuum !== 'on'
      ? 'autovacuum is off on this server'
      : row.track_counts !== 'on'
        ? 'track_counts is off on this server, so autovacuum never starts'
        : row.off.length > 0
          ? `autovacuum is disabled on ${row.off.map((t) => `workhorse.${t}`).join(', ')}`
          : undefined;
  if (!what) return undefined;
  return `[workhorse] warning: ${what}: the dead rows every claim and settlement leaves are never cleared, so the queue's tables grow whatever the retention and claims slow down; turn it on, or VACUUM the workhorse tables on a schedule`;
}

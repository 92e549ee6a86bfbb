// Whether the benchmark's server makes commits durable. With fsync,
// synchronous_commit or full_page_writes off a commit costs less than on
// any production server, which flatters every system and hides exactly the
// costs (commits, WAL flushes, full-page images) a queue should be judged
// on; such a run is marked as not for publication. Whether autovacuum runs
// is read too: it does not make a commit cheaper, but a server without it
// keeps every dead row until a VACUUM, which a long run pays for.
import pg from 'pg';

export interface Durability {
  fsync: string;
  synchronousCommit: string;
  fullPageWrites: string;
  /** All three on (synchronous_commit anything but `off`: `local`, `remote_write`... still flush locally). */
  durable: boolean;
  /** `autovacuum` as the server runs it (absent in results written before it was read). */
  autovacuum?: string;
}

/** The three settings as a session on `serverUrl` sees them (role and database settings included). */
export async function readDurability(serverUrl: string): Promise<Durability> {
  const c = new pg.Client({ connectionString: serverUrl });
  await c.connect();
  try {
    const r = await c.query<{ fsync: string; sc: string; fpw: string; av: string }>(
      `select current_setting('fsync') as fsync,
              current_setting('synchronous_commit') as sc,
              current_setting('full_page_writes') as fpw,
              current_setting('autovacuum') as av`,
    );
    const { fsync, sc, fpw, av } = r.rows[0]!;
    return { fsync, synchronousCommit: sc, fullPageWrites: fpw, durable: fsync === 'on' && sc !== 'off' && fpw === 'on', autovacuum: av };
  } finally {
    await c.end();
  }
}

/** `fsync on, synchronous_commit on, full_page_writes on`, for the table's header. */
export function describeDurability(d: Durability): string {
  return `fsync ${d.fsync}, synchronous_commit ${d.synchronousCommit}, full_page_writes ${d.fullPageWrites}`;
}

/** A note for the header when the server does not autovacuum; undefined when it does (or was not read). */
export function autovacuumNote(d: Durability): string | undefined {
  if (d.autovacuum === undefined || d.autovacuum === 'on') return undefined;
  return (
    `autovacuum ${d.autovacuum}: dead rows stay until a VACUUM. Each measurement runs on a fresh database, so a drain of ` +
    'seconds is not moved by it; a long run is (the scale phase runs its own VACUUMs)'
  );
}

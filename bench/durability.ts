// Whether the benchmark's server makes commits durable. With fsync,
// synchronous_commit or full_page_writes off a commit costs less than on
// any production server, which flatters every system and hides exactly the
// costs (commits, WAL flushes, full-page images) a queue should be judged
// on; such a run is marked as not for publication.
import pg from 'pg';

export interface Durability {
  fsync: string;
  synchronousCommit: string;
  fullPageWrites: string;
  /** All three on (synchronous_commit anything but `off`: `local`, `remote_write`... still flush locally). */
  durable: boolean;
}

/** The three settings as a session on `serverUrl` sees them (role and database settings included). */
export async function readDurability(serverUrl: string): Promise<Durability> {
  const c = new pg.Client({ connectionString: serverUrl });
  await c.connect();
  try {
    const r = await c.query<{ fsync: string; sc: string; fpw: string }>(
      `select current_setting('fsync') as fsync,
              current_setting('synchronous_commit') as sc,
              current_setting('full_page_writes') as fpw`,
    );
    const { fsync, sc, fpw } = r.rows[0]!;
    return { fsync, synchronousCommit: sc, fullPageWrites: fpw, durable: fsync === 'on' && sc !== 'off' && fpw === 'on' };
  } finally {
    await c.end();
  }
}

/** `fsync on, synchronous_commit on, full_page_writes on`, for the table's header. */
export function describeDurability(d: Durability): string {
  return `fsync ${d.fsync}, synchronous_commit ${d.synchronousCommit}, full_page_writes ${d.fullPageWrites}`;
}

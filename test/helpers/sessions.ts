// Sessions of their own (not a pool's) for tests that force an interleaving
// of statements on separate connections: each with its backend pid, and a
// wait until one backend is blocked by another (pg_blocking_pids), so the
// order is forced, not timed.
import pg from 'pg';
import { waitFor } from './wait.js';

export interface Session {
  c: pg.Client;
  pid: number;
}

export class Sessions {
  private open: pg.Client[] = [];

  constructor(private readonly url: () => string) {}

  async connect(): Promise<Session> {
    const c = new pg.Client({ connectionString: this.url() });
    await c.connect();
    this.open.push(c);
    const pid = (await c.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    return { c, pid };
  }

  /** Ends every session opened since the last call. */
  async endAll(): Promise<void> {
    const open = this.open.splice(0);
    await Promise.all(open.map((c) => c.end()));
  }
}

/** Resolves once backend `pid` waits for a lock held by backend `holder` (any backend: null). */
export async function blockedBy(db: Pick<pg.Pool, 'query'>, pid: number, holder: number | null, what: string): Promise<void> {
  await waitFor(
    async () => (await db.query<{ b: number[] }>('select pg_blocking_pids($1) as b', [pid])).rows[0]!.b,
    (b) => (holder === null ? b.length > 0 : b.includes(holder)),
    { what },
  );
}

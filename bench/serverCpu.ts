// CPU time the PostgreSQL backends of one database have used, read from
// /proc (schedstat, or utime + stime from stat). Only meaningful when the server runs on
// this machine (it does in the benchmark's default setup); otherwise the
// readings are null. CPU per job is a steadier measure than jobs/s on a
// machine that is busy with other work.
import { readFileSync } from 'node:fs';
import pg from 'pg';

const TICK_MS = 10; // CLK_TCK is 100 on Linux

/**
 * CPU ms one backend process has used, or null when /proc cannot see it:
 * from /proc/<pid>/schedstat (nanoseconds on the CPU) where the kernel has
 * it, else from /proc/<pid>/stat (10 ms ticks: a short drain over several
 * backends would read tens of ms off).
 */
export function backendCpuMs(pid: number): number | null {
  try {
    const ns = Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ', 1)[0]);
    if (Number.isFinite(ns)) return ns / 1e6;
  } catch {
    // no schedstat: the tick counts below
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return null;
  }
}

/** Sum of CPU ms of every backend connected to `database`, or null when /proc cannot see them. */
export async function databaseCpuMs(serverUrl: string, database: string): Promise<number | null> {
  const c = new pg.Client({ connectionString: serverUrl });
  await c.connect();
  try {
    const r = await c.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [database]);
    let total = 0;
    for (const { pid } of r.rows) {
      const ms = backendCpuMs(pid);
      if (ms === null) return null;
      total += ms;
    }
    return total;
  } finally {
    await c.end();
  }
}

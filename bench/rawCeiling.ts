// The machine's raw ceiling for this design: a loop of bare batch-claim and
// batch-complete statements in plain pg, no framework around them, on the
// workhorse tables and indexes. The claim walks the ready partial index
// with FOR UPDATE SKIP LOCKED, skipping leased rows, and writes only the
// (UNLOGGED) lease rows with the next execution; the settle locks the
// leases under the (job, execution, worker) fence, writes each job row
// once, succeeded, with the lease's attempt and execution, and deletes the
// leases last: the protocol's shape (sql/009_lean_leases.sql,
// protocol/settle.sql), none of its generality (types, gates,
// rate limits, ticks, the lease epoch, the ledger's later-attempt rows,
// function calls).
import pg from 'pg';
import { backendCpuMs } from './serverCpu.js';

const CLAIM = `
with cand as (
  select j.id, j.execution, j.attempt, j.payload, j.queue from workhorse.jobs j
   where j.namespace = $1 and j.queue = $2 and j.status = 'ready' and j.run_at <= now()
     and not exists (select 1 from workhorse.job_runtime r where r.job_id = j.id)
   order by j.priority, j.run_at, j.id
   limit $3
   for update skip locked
), lease as (
  insert into workhorse.job_runtime (job_id, namespace, worker_id, queue, execution, attempt, expires_at)
  select c.id, $1, $4, c.queue, c.execution + 1, c.attempt + 1, now() + interval '3 minutes' from cand c
  on conflict (job_id) do nothing
  returning job_id
)
select c.id, c.execution + 1 as execution, c.payload from cand c
 where coalesce(c.id in (select l.job_id from lease l), false)`;

const COMPLETE = `
with held as (
  select r.job_id, r.execution, r.attempt, r.claimed_at from workhorse.job_runtime r
    join unnest($2::bigint[], $3::bigint[]) as t(job_id, execution)
      on r.job_id = t.job_id and r.execution = t.execution
   where r.worker_id = $4 and r.namespace = $1
     for update of r
), upd as (
  update workhorse.jobs j
     set status = 'succeeded', execution = d.execution, attempt = d.attempt, started_at = d.claimed_at,
         finished_at = now(), updated_at = now()
    from held d where j.id = d.job_id
  returning j.id
), gone as (
  -- Not read by the main query, so it runs after it (after upd): the lease goes last.
  delete from workhorse.job_runtime r using held h where r.job_id = h.job_id
)
select count(*)::integer as n from upd`;

export interface RawOptions {
  url: string;
  namespace: string;
  queue: string;
  batch: number;
  loops: number;
}

async function loop(client: pg.Client, o: RawOptions, worker: string): Promise<number> {
  let done = 0;
  for (;;) {
    const claimed = await client.query<{ id: string; execution: number }>({
      name: 'raw_claim',
      text: CLAIM,
      values: [o.namespace, o.queue, o.batch, worker],
    });
    if (claimed.rows.length === 0) return done;
    const settled = await client.query<{ n: number }>({
      name: 'raw_complete',
      text: COMPLETE,
      values: [o.namespace, claimed.rows.map((r) => r.id), claimed.rows.map((r) => r.execution), worker],
    });
    done += settled.rows[0]!.n;
  }
}

/**
 * Runs `loops` claim/complete loops side by side, each on its own
 * connection, until the queue is empty. The clock starts once every
 * connection is open.
 */
export async function runRawCeiling(
  o: RawOptions,
): Promise<{ handled: number; ms: number; clientCpuMs: number; serverCpuMs: number | null }> {
  const clients = Array.from({ length: o.loops }, () => new pg.Client({ connectionString: o.url }));
  await Promise.all(clients.map((c) => c.connect()));
  const pids = await Promise.all(clients.map(async (c) => (await c.query<{ p: number }>('select pg_backend_pid() as p')).rows[0]!.p));
  const serverCpu = () => pids.reduce<number | null>((a, p) => (a === null ? null : ((v) => (v === null ? null : a + v))(backendCpuMs(p))), 0);
  try {
    const server0 = serverCpu();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const counts = await Promise.all(clients.map((c, i) => loop(c, o, `raw-${process.pid}-${i}`)));
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const server1 = serverCpu();
    return {
      handled: counts.reduce((a, b) => a + b, 0),
      ms,
      clientCpuMs: (cpu.user + cpu.system) / 1000,
      serverCpuMs: server0 === null || server1 === null ? null : server1 - server0,
    };
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }
}

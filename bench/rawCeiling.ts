// The machine's raw ceiling for this design: a loop of bare batch-claim and
// batch-complete statements in plain pg, no framework around them, on the
// workhorse tables and indexes. The claim walks the ready partial index
// with FOR UPDATE SKIP LOCKED, bumps `execution` and writes the lease rows;
// the settle deletes the leases under the (job, execution, worker) fence,
// marks the jobs succeeded and appends to the attempts ledger: every
// guarantee the real protocol keeps, none of its generality (types, gates,
// rate limits, function calls).
import pg from 'pg';
import { backendCpuMs } from './serverCpu.js';

const CLAIM = `
with cand as (
  select j.id from workhorse.jobs j
   where j.namespace = $1 and j.queue = $2 and j.status = 'ready' and j.run_at <= now()
   order by j.priority, j.run_at, j.id
   limit $3
   for update skip locked
), upd as (
  update workhorse.jobs j
     set status = 'running', attempt = j.attempt + 1, execution = j.execution + 1,
         started_at = now(), updated_at = now()
    from cand c where j.id = c.id
  returning j.id, j.execution, j.payload, j.queue
), lease as (
  insert into workhorse.job_runtime (job_id, namespace, worker_id, queue, execution, expires_at)
  select u.id, $1, $4, u.queue, u.execution, now() + interval '3 minutes' from upd u
)
select u.id, u.execution, u.payload from upd u`;

const COMPLETE = `
with del as (
  delete from workhorse.job_runtime r
   using unnest($2::bigint[], $3::integer[]) as t(job_id, execution)
   where r.job_id = t.job_id and r.execution = t.execution and r.worker_id = $4
  returning r.job_id, r.execution, r.claimed_at
), upd as (
  update workhorse.jobs j
     set status = 'succeeded', finished_at = now(), updated_at = now()
    from del d where j.id = d.job_id and j.execution = d.execution
  returning j.id, j.attempt, d.execution, d.claimed_at
), ledger as (
  insert into workhorse.job_attempts (job_id, execution, attempt, namespace, worker_id, outcome, started_at)
  select u.id, u.execution, u.attempt, $1, $4, 'succeeded', u.claimed_at from upd u
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

-- reads: what operators and dashboards look at. Read-only, stable. A
-- running job is a ready row with a lease (009_lean_leases): every read
-- reports it as `running`, with its lease's attempt, execution and start.
-- A waiting job is in the middle of an attempt (a suspension does not
-- count one: the stored attempt is the attempts finished), so reads report
-- the attempt it is on, the one its handler sees as ctx.job.attempt.

create function workhorse.job_as_seen_v1(j workhorse.jobs, r workhorse.job_runtime)
returns workhorse.jobs language plpgsql immutable as $$
begin
  if r.job_id is not null then
    j.status := 'running';
    j.attempt := r.attempt;
    j.execution := r.execution;
    j.started_at := r.claimed_at;
    j.last_worker := r.worker_id;
  elsif j.status = 'waiting' then
    j.attempt := j.attempt + 1;
  end if;
  return j;
end $$;
comment on function workhorse.job_as_seen_v1(workhorse.jobs, workhorse.job_runtime) is
  'A jobs row as readers see it: with a lease (r not null) it is running, at the lease''s attempt, execution, start and worker; a waiting job at the attempt it is on (the stored attempt + 1: a suspension counts none); otherwise the row as stored.';

create function workhorse.get_job_v1(p_namespace text, p_job_id bigint)
returns setof workhorse.jobs language sql stable as $$
  select (workhorse.job_as_seen_v1(j, r)).*
    from workhorse.jobs j left join workhorse.job_runtime r on r.job_id = j.id
   where j.namespace = p_namespace and j.id = p_job_id
$$;
comment on function workhorse.get_job_v1(text, bigint) is
  'The job of (namespace, id) as job_as_seen_v1 reports it (running when leased), or no row.';

-- For failed and cancelled the query states the dead-jobs index's predicate
-- literally, so the planner can use that index in a generic plan too.
-- Running pages walk the lease table (only live leases are in it).
create function workhorse.list_jobs_v1(
  p_namespace text, p_status text, p_queue text, p_type text, p_limit integer, p_before_id bigint)
returns setof workhorse.jobs language plpgsql stable as $$
begin
  if p_status in ('failed', 'cancelled') then
    return query
    select * from workhorse.jobs j
     where j.namespace = p_namespace
       and j.status in ('failed', 'cancelled') and j.status = p_status
       and (p_queue is null or j.queue = p_queue)
       and (p_type is null or j.type = p_type)
       and (p_before_id is null or j.id < p_before_id)
     order by j.id desc
     limit p_limit;
  elsif p_status = 'running' then
    return query
    select (workhorse.job_as_seen_v1(j, r)).*
      from workhorse.job_runtime r join workhorse.jobs j on j.id = r.job_id
     where r.namespace = p_namespace
       and (p_queue is null or j.queue = p_queue)
       and (p_type is null or j.type = p_type)
       and (p_before_id is null or r.job_id < p_before_id)
     order by r.job_id desc
     limit p_limit;
  else
    return query
    select (workhorse.job_as_seen_v1(j, r)).*
      from workhorse.jobs j left join workhorse.job_runtime r on r.job_id = j.id
     where j.namespace = p_namespace
       and (p_status is null or j.status = p_status)
       and (p_status is distinct from 'ready' or r.job_id is null)
       and (p_queue is null or j.queue = p_queue)
       and (p_type is null or j.type = p_type)
       and (p_before_id is null or j.id < p_before_id)
     order by j.id desc
     limit p_limit;
  end if;
end $$;
comment on function workhorse.list_jobs_v1(text, text, text, text, integer, bigint) is
  'Jobs of the namespace newest first (by id) as job_as_seen_v1 reports them, filtered by status (running = leased; ready = not leased), queue and type when not null, at most p_limit, keyset-paginated: p_before_id is the last id of the previous page. Failed and cancelled pages walk a partial index of their own, running pages the lease table.';

create function workhorse.list_workers_v1(p_namespace text)
returns setof workhorse.worker_registry language sql stable as $$
  select * from workhorse.worker_registry where namespace = p_namespace order by started_at, id
$$;
comment on function workhorse.list_workers_v1(text) is
  'The registry rows of the namespace, oldest registration first.';

create function workhorse.list_queues_v1(p_namespace text)
returns table (name text, paused boolean, concurrency_limit integer, rate_limit integer,
               rate_period_ms integer, ready bigint, running bigint, waiting bigint)
language sql stable as $$
  -- Each count walks the structure that already holds only those rows: the
  -- ready index, the lease table, the waiting index. A leased job is a
  -- ready row too, so ready is the ready rows less the leases.
  with counts as (
    select x.queue, sum(x.ready) as ready, sum(x.running) as running, sum(x.waiting) as waiting
      from (
        select j.queue, count(*) as ready, 0 as running, 0 as waiting from workhorse.jobs j
         where j.namespace = p_namespace and j.status = 'ready' group by j.queue
        union all
        select r.queue, 0, count(*), 0 from workhorse.job_runtime r
         where r.namespace = p_namespace group by r.queue
        union all
        select j.queue, 0, 0, count(*) from workhorse.jobs j
         where j.namespace = p_namespace and j.status = 'waiting' group by j.queue
      ) x
     group by x.queue
  )
  select coalesce(q.name, c.queue), coalesce(q.paused, false), q.concurrency_limit, q.rate_limit,
         coalesce(q.rate_period_ms, 1000), greatest(coalesce(c.ready, 0) - coalesce(c.running, 0), 0)::bigint,
         coalesce(c.running, 0)::bigint, coalesce(c.waiting, 0)::bigint
    from (select * from workhorse.queues where namespace = p_namespace) q
    full join counts c on c.queue = q.name
   order by 1
$$;
comment on function workhorse.list_queues_v1(text) is
  'Every queue of the namespace that has a policy row or holds jobs: paused, limits, and ready, running and waiting counts (each walks the structure that holds only those rows).';

create function workhorse.list_leases_v1(p_namespace text)
returns table (job_id bigint, worker_id text, execution bigint, expires_at timestamptz, expires_in_ms bigint)
language sql stable as $$
  select r.job_id, r.worker_id, r.execution, r.expires_at,
         (extract(epoch from r.expires_at - now()) * 1000)::bigint
    from workhorse.job_runtime r where r.namespace = p_namespace order by r.job_id
$$;
comment on function workhorse.list_leases_v1(text) is
  'The live leases of the namespace: job, worker, execution, expiry and milliseconds until it.';

-- 006_fault_tolerance: what a database fault (or a crash) does to the books.
--
--  * A lease knows whether its handler started (job_runtime.started). The
--    claim marks the rows the worker starts at once (the first p_start in
--    claim order); jobs it buffers are marked by a later heartbeat. Recovery
--    counts an attempt only against a started lease: a prefetched job whose
--    worker died before starting it goes back to ready with its attempt
--    returned (ledger outcome `orphaned`). A job started from the buffer that
--    kills its worker before the next heartbeat looks unstarted, so after
--    two orphaned recoveries a third counts: a job that kills its worker
--    every time still ends `failed`, never in a loop.
--  * Recovery never waits for a registry row: one locked is a worker
--    heartbeating right now (alive), so marking the silent dead skips locked
--    rows. Two heartbeats whose recovery passes each wanted the other's row
--    deadlocked before (each holds its own row until commit).

alter table workhorse.job_runtime add column started boolean not null default false;

alter table workhorse.job_attempts drop constraint job_attempts_outcome_check;
alter table workhorse.job_attempts add constraint job_attempts_outcome_check
  check (outcome in ('succeeded', 'failed', 'retried', 'recovered', 'orphaned', 'cancelled', 'released'));

drop function workhorse.claim_v1(text, text, text[], text[], integer, integer);
drop function workhorse.claim_many_v1(text, text, text[], text[], integer, integer, integer);

-- Claims up to p_limit jobs across this worker's queues, in the order given
-- (callers rotate it); the first p_start of them (in the order returned)
-- are the ones the worker starts at once, marked started in their leases.
-- Paused queues are skipped; a queue with a fleet-wide concurrency limit or
-- a rate limit is claimed under its queue row lock. No JIT, never a generic
-- plan (see 004_lean_claim).
create function workhorse.claim_many_v1(
  p_namespace text, p_worker_id text, p_queues text[], p_types text[], p_limit integer,
  p_lease_ms integer, p_max_timeout_ms integer default null, p_start integer default null)
returns setof workhorse.claimed_job language plpgsql
set jit = off
as $$
declare
  v_left integer := p_limit;
  v_start integer := coalesce(p_start, p_limit);
  v_allowed integer;
  v_got integer;
  v_queue text;
  v_limited boolean;
  q workhorse.queues;
begin
  if p_limit <= 0 or cardinality(p_types) = 0 then return; end if;
  foreach v_queue in array p_queues loop
    exit when v_left <= 0;
    select * into q from workhorse.queues where namespace = p_namespace and name = v_queue;
    v_limited := found and (q.paused or q.concurrency_limit is not null or q.rate_limit is not null);
    v_allowed := v_left;
    if v_limited then
      continue when q.paused;
      select * into q from workhorse.queues where namespace = p_namespace and name = v_queue for update;
      continue when q.paused;
      if q.concurrency_limit is not null then
        v_allowed := least(v_allowed, q.concurrency_limit - (
          select count(*) from workhorse.job_runtime r
           where r.namespace = p_namespace and r.queue = v_queue)::integer);
      end if;
      if q.rate_limit is not null then
        q.tokens := least(q.rate_limit::double precision,
          q.tokens + q.rate_limit * extract(epoch from now() - q.refilled_at) * 1000 / q.rate_period_ms);
        v_allowed := least(v_allowed, floor(q.tokens)::integer);
      end if;
    end if;
    v_got := 0;
    if v_allowed > 0 then
      return query
      with cand as (
        select j.id, j.concurrency_key, j.priority, j.run_at
          from workhorse.jobs j
         where j.namespace = p_namespace and j.queue = v_queue and j.status = 'ready'
           and j.run_at <= now()
           and j.type = any(p_types)
           and (p_max_timeout_ms is null or j.timeout_ms is null or j.timeout_ms <= p_max_timeout_ms)
           and (j.concurrency_key is null or not exists (
                 select 1 from workhorse.job_gates g where g.namespace = p_namespace and g.key = j.concurrency_key))
         order by j.priority, j.run_at, j.id
         limit v_allowed
         for update of j skip locked
      ), gated as (
        insert into workhorse.job_gates (namespace, key, job_id)
        select distinct on (c.concurrency_key) p_namespace, c.concurrency_key, c.id
          from cand c where c.concurrency_key is not null
         order by c.concurrency_key, c.priority, c.run_at, c.id
        on conflict do nothing
        returning job_id
      ), picked as (
        select c.id from cand c where c.concurrency_key is null
        union all
        select g.job_id from gated g
      ), upd as (
        update workhorse.jobs j
           set status = 'running', attempt = j.attempt + 1, execution = j.execution + 1,
               started_at = now(), updated_at = now()
          from picked p
         where j.id = p.id
        returning j.id, j.queue, j.type, j.payload, j.priority, j.run_at, j.attempt, j.max_attempts,
                  j.execution, j.timeout_ms, j.concurrency_key, j.progress, j.created_at
      ), ranked as (
        select u.*, row_number() over (order by u.priority, u.run_at, u.id) as rank from upd u
      ), lease as (
        insert into workhorse.job_runtime (job_id, namespace, worker_id, queue, execution, expires_at, started)
        select r.id, p_namespace, p_worker_id, r.queue, r.execution, now() + p_lease_ms * interval '1 millisecond',
               r.rank <= v_start
          from ranked r
      )
      select r.id, r.queue, r.type, r.payload, r.priority, date_part('epoch', r.run_at) * 1000,
             r.attempt, r.max_attempts, r.execution, r.timeout_ms, r.concurrency_key, r.progress,
             date_part('epoch', r.created_at) * 1000,
             date_part('epoch', now() + p_lease_ms * interval '1 millisecond') * 1000
        from ranked r
       order by r.rank;
      get diagnostics v_got = row_count;
      v_left := v_left - v_got;
      v_start := greatest(0, v_start - v_got);
    end if;
    if v_limited and q.rate_limit is not null then
      update workhorse.queues set tokens = q.tokens - v_got, refilled_at = now()
       where namespace = p_namespace and name = v_queue;
    end if;
  end loop;
end $$;

-- The single-job form of claim_many_v1, same semantics; the job is started at once.
create function workhorse.claim_v1(
  p_namespace text, p_worker_id text, p_queues text[], p_types text[], p_lease_ms integer,
  p_max_timeout_ms integer default null)
returns setof workhorse.claimed_job language sql as $$
  select * from workhorse.claim_many_v1(p_namespace, p_worker_id, p_queues, p_types, 1, p_lease_ms, p_max_timeout_ms, 1)
$$;

-- Makes up to p_limit expired leases' jobs ready again. A started lease
-- counts its attempt (the job ends `failed` when that was the last one); an
-- unstarted one gives its attempt back (`orphaned`), unless the job was
-- orphaned twice already. Marks workers silent for 7 heartbeats dead and
-- removes rows dead for a further minute. Rows locked by someone else are
-- skipped, never waited for: a lease a transactional step holds, a
-- registry row its worker is heartbeating.
create or replace function workhorse.recover_expired_v1(p_namespace text, p_limit integer default 100)
returns integer language plpgsql as $$
declare
  v_recovered integer;
begin
  with expired as (
    select r.job_id from workhorse.job_runtime r
     where r.namespace = p_namespace and r.expires_at < now()
     order by r.expires_at
     limit p_limit
     for update skip locked
  ), del as (
    delete from workhorse.job_runtime r using expired e where r.job_id = e.job_id
    returning r.job_id, r.execution, r.worker_id, r.claimed_at,
              r.started or (select count(*) from workhorse.job_attempts a
                             where a.job_id = r.job_id and a.outcome = 'orphaned') >= 2 as counted
  ), upd as (
    update workhorse.jobs j
       set status = case when d.counted and j.attempt >= j.max_attempts then 'failed' else 'ready' end,
           attempt = case when d.counted then j.attempt else greatest(j.attempt - 1, 0) end,
           run_at = now(),
           finished_at = case when d.counted and j.attempt >= j.max_attempts then now() end,
           started_at = case when d.counted then j.started_at end,
           last_error = case when d.counted then jsonb_build_object('name', 'LeaseExpired',
                          'message', 'lease expired: worker ' || d.worker_id || ' stopped heartbeating',
                          'attempt', j.attempt, 'worker', d.worker_id) else j.last_error end,
           updated_at = now()
      from del d
     where j.id = d.job_id and j.execution = d.execution
    returning j.id, j.execution, j.attempt, j.queue, j.status, j.last_error, d.worker_id, d.claimed_at, d.counted
  ), gates as (
    delete from workhorse.job_gates g using upd where g.namespace = p_namespace and g.job_id = upd.id
  ), ledger as (
    insert into workhorse.job_attempts (job_id, execution, attempt, namespace, worker_id, outcome, error, started_at)
    select upd.id, upd.execution, case when upd.counted then upd.attempt else upd.attempt + 1 end, p_namespace,
           upd.worker_id, case when upd.counted then 'recovered' else 'orphaned' end,
           case when upd.counted then upd.last_error end, upd.claimed_at
      from upd
    on conflict do nothing
  ), notified as (
    select pg_notify('workhorse:' || p_namespace, q.queue)
      from (select distinct upd.queue from upd where upd.status = 'ready') q
  )
  select count(*) into v_recovered from upd, (select count(*) from notified) n;

  update workhorse.worker_registry w set state = 'dead'
   where (w.namespace, w.id) in (
     select s.namespace, s.id from workhorse.worker_registry s
      where s.namespace = p_namespace and s.state <> 'dead'
        and s.last_seen < now() - 7 * s.heartbeat_ms * interval '1 millisecond'
        for update skip locked);
  delete from workhorse.worker_registry w
   where (w.namespace, w.id) in (
     select s.namespace, s.id from workhorse.worker_registry s
      where s.namespace = p_namespace and s.state = 'dead'
        and s.last_seen < now() - 7 * s.heartbeat_ms * interval '1 millisecond' - interval '1 minute'
        for update skip locked);
  return v_recovered;
end $$;

drop function workhorse.heartbeat_many_v1(text, text, bigint[], integer[], integer, integer, integer);

-- One statement per worker whatever its load: refreshes the registry row,
-- extends every lease it still owns (marking those whose handler has
-- started since: p_started, parallel to p_job_ids), and runs a bounded
-- recovery pass. `accepted` lists the job ids whose (job, execution) lease
-- is still this worker's; the worker aborts every other handler.
-- `registered` is false when the registry row is gone (the worker was
-- declared dead): the worker registers again. `paused` is the operator
-- pause stored in the registry.
create function workhorse.heartbeat_many_v1(
  p_namespace text, p_worker_id text, p_job_ids bigint[], p_executions integer[],
  p_active integer, p_lease_ms integer, p_recover_limit integer default 100, p_started boolean[] default null)
returns table (accepted bigint[], registered boolean, paused boolean, recovered integer)
language plpgsql as $$
declare
  v_accepted bigint[];
  v_registered boolean;
  v_paused boolean;
begin
  update workhorse.worker_registry w
     set last_seen = now(), active = p_active, state = case when w.state = 'dead' then 'active' else w.state end
   where w.namespace = p_namespace and w.id = p_worker_id
  returning true, w.operator_paused into v_registered, v_paused;

  -- Never waits for a lease row: one locked by someone else is being
  -- settled, cancelled or recovered right now. NO KEY UPDATE does not
  -- conflict with a transactional step's KEY SHARE lock.
  update workhorse.job_runtime r
     set expires_at = now() + p_lease_ms * interval '1 millisecond',
         started = r.started or coalesce(t.started, false)
    from unnest(p_job_ids, p_executions,
                coalesce(p_started, array_fill(false, array[cardinality(p_job_ids)])))
         as t(job_id, execution, started)
   where r.job_id = t.job_id
     and r.job_id in (
       select l.job_id from workhorse.job_runtime l
         join unnest(p_job_ids, p_executions) as u(job_id, execution)
           on l.job_id = u.job_id and l.execution = u.execution
        where l.worker_id = p_worker_id
        for no key update of l skip locked);

  select coalesce(array_agg(r.job_id), '{}') into v_accepted
    from workhorse.job_runtime r
    join unnest(p_job_ids, p_executions) as t(job_id, execution)
      on r.job_id = t.job_id and r.execution = t.execution
   where r.worker_id = p_worker_id;

  return query select v_accepted, coalesce(v_registered, false), coalesce(v_paused, false),
    case when p_recover_limit > 0 then workhorse.recover_expired_v1(p_namespace, p_recover_limit) else 0 end;
end $$;

-- retention_v1 removes registry rows the same way: skipping locked ones.
create or replace function workhorse.retention_v1(p_namespace text, p_older_than_ms bigint, p_limit integer)
returns table (jobs integer, workers integer) language plpgsql as $$
declare
  v_jobs integer;
  v_workers integer;
begin
  with doomed as (
    select j.id from workhorse.jobs j
     where j.namespace = p_namespace and j.status in ('succeeded', 'failed', 'cancelled')
       and j.finished_at < now() - p_older_than_ms * interval '1 millisecond'
     order by j.finished_at
     limit p_limit
     for update skip locked
  ), steps as (
    delete from workhorse.job_steps s using doomed d where s.job_id = d.id
  ), attempts as (
    delete from workhorse.job_attempts a using doomed d where a.job_id = d.id
  ), gone as (
    delete from workhorse.jobs j using doomed d where j.id = d.id returning j.id
  )
  select count(*) into v_jobs from gone;

  delete from workhorse.worker_registry w
   where (w.namespace, w.id) in (
     select s.namespace, s.id from workhorse.worker_registry s
      where s.namespace = p_namespace
        and (s.state = 'dead' or s.last_seen < now() - 7 * s.heartbeat_ms * interval '1 millisecond')
        for update skip locked);
  get diagnostics v_workers = row_count;
  return query select v_jobs, v_workers;
end $$;

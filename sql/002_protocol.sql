-- 002_protocol: every state transition of the job lifecycle as one versioned
-- PL/pgSQL function, atomic in one round trip and callable from any language.
--
-- Conventions: every function takes the namespace first; every time
-- comparison uses now() (the database clock); every write made on behalf of
-- a running handler carries (job_id, execution) and is refused when the
-- lease row with that execution no longer exists (the fence). Batch forms
-- take parallel arrays and run one statement per batch, never a loop per row.
--
-- A lease row exists exactly while its job is `running` at that execution
-- (every way out of `running` deletes it in the same statement), so the
-- statements that delete a lease and then update its job match the job on
-- (id, execution), never on `status = 'running'`: that predicate lets the
-- planner drive the join from the partial running index, and with the
-- statistics of a table whose running set changes by thousands a second it
-- picks a nested loop over every running row per settled job (measured:
-- 835 ms instead of 11 ms to complete 500 jobs with 5,500 leased).

-- What a claim hands to a worker. Times travel as epoch milliseconds: the
-- driver turns a number into a Date far more cheaply than it parses a
-- timestamp's text, which mattered at thousands of claimed jobs a second.
create type workhorse.claimed_job as (
  id              bigint,
  queue           text,
  type            text,
  payload         jsonb,
  priority        integer,
  run_at_ms       double precision,
  attempt         integer,
  max_attempts    integer,
  execution       integer,
  timeout_ms      integer,
  concurrency_key text,
  progress        jsonb,
  created_at_ms   double precision,
  expires_at_ms   double precision
);

-- Backoff before attempt `p_attempt + 1`, in milliseconds.
create function workhorse.backoff_ms_v1(p_kind text, p_base_ms integer, p_max_ms integer, p_attempt integer)
returns double precision language sql immutable as $$
  select least(
    p_max_ms::double precision,
    case p_kind
      when 'fixed'  then p_base_ms::double precision
      when 'linear' then p_base_ms::double precision * greatest(p_attempt, 1)
      else p_base_ms::double precision * power(2::double precision, least(greatest(p_attempt, 1) - 1, 40))
    end)
$$;

-- Release gates held by settled jobs (called inside settle statements).
create function workhorse.release_gates_v1(p_namespace text, p_job_ids bigint[])
returns void language sql as $$
  delete from workhorse.job_gates g
   where g.namespace = p_namespace and g.job_id = any(p_job_ids)
$$;

------------------------------------------------------------------------------
-- Registry
------------------------------------------------------------------------------

create function workhorse.register_worker_v1(
  p_namespace text, p_worker_id text, p_build text, p_kind text, p_queues text[],
  p_types text[], p_concurrency integer, p_heartbeat_ms integer, p_deadline timestamptz default null)
returns timestamptz language sql as $$
  insert into workhorse.worker_registry as w
    (namespace, id, build, kind, queues, types, concurrency, active, heartbeat_ms, deadline,
     state, operator_paused, started_at, last_seen)
  values (p_namespace, p_worker_id, p_build, p_kind, p_queues, p_types, p_concurrency, 0,
          p_heartbeat_ms, p_deadline, 'active', false, now(), now())
  on conflict (namespace, id) do update set
    build = excluded.build, kind = excluded.kind, queues = excluded.queues, types = excluded.types,
    concurrency = excluded.concurrency, heartbeat_ms = excluded.heartbeat_ms,
    deadline = excluded.deadline, state = 'active', operator_paused = false,
    started_at = now(), last_seen = now()
  returning now()
$$;

-- Removes the registry row. Claims the worker never started go back to
-- `ready` with no attempt counted; any other lease it still holds is
-- expired at once so the next recovery pass returns it (attempt counted).
create function workhorse.deregister_worker_v1(p_namespace text, p_worker_id text, p_unstarted bigint[] default '{}')
returns integer language plpgsql as $$
declare
  v_released integer;
begin
  with rel as (
    delete from workhorse.job_runtime r
     where r.namespace = p_namespace and r.worker_id = p_worker_id and r.job_id = any(p_unstarted)
    returning r.job_id, r.execution, r.claimed_at
  ), upd as (
    update workhorse.jobs j
       set status = 'ready', attempt = greatest(j.attempt - 1, 0), updated_at = now(), started_at = null
      from rel
     where j.id = rel.job_id and j.execution = rel.execution
    returning j.id, j.execution, j.attempt, rel.claimed_at
  ), gates as (
    delete from workhorse.job_gates g using upd where g.namespace = p_namespace and g.job_id = upd.id
  ), ledger as (
    insert into workhorse.job_attempts (job_id, execution, attempt, namespace, worker_id, outcome, started_at)
    select upd.id, upd.execution, upd.attempt + 1, p_namespace, p_worker_id, 'released', upd.claimed_at from upd
  )
  select count(*) into v_released from upd;

  update workhorse.job_runtime set expires_at = now()
   where namespace = p_namespace and worker_id = p_worker_id;

  delete from workhorse.worker_registry where namespace = p_namespace and id = p_worker_id;
  perform pg_notify('workhorse:' || p_namespace, '*') where v_released > 0;
  return v_released;
end $$;

------------------------------------------------------------------------------
-- Enqueue
------------------------------------------------------------------------------

-- Bulk insert from a JSON array of job objects (keys are the column names).
-- Returns one row per input, in input order; `created` is false when a job
-- with the same dedupe_key already existed and that job's id is returned.
-- Notifies each affected queue once, never once per row.
create function workhorse.enqueue_many_v1(p_namespace text, p_jobs jsonb)
returns table (ord integer, id bigint, created boolean) language plpgsql as $$
declare
  v_ord integer[]; v_id bigint[]; v_key text[]; v_created boolean[]; v_queues text[];
begin
  with rows as materialized (
    select (x.ordinality)::integer as ord,
           nextval('workhorse.jobs_id_seq') as id,
           coalesce(x.value->>'queue', 'default') as queue,
           x.value->>'type' as type,
           coalesce(x.value->'payload', '{}'::jsonb) as payload,
           coalesce((x.value->>'priority')::integer, 0) as priority,
           coalesce((x.value->>'run_at')::timestamptz,
                    now() + coalesce((x.value->>'delay_ms')::bigint, 0) * interval '1 millisecond') as run_at,
           coalesce((x.value->>'max_attempts')::integer, 25) as max_attempts,
           coalesce(x.value->>'backoff_kind', 'exponential') as backoff_kind,
           coalesce((x.value->>'backoff_base_ms')::integer, 1000) as backoff_base_ms,
           coalesce((x.value->>'backoff_max_ms')::integer, 3600000) as backoff_max_ms,
           x.value->>'concurrency_key' as concurrency_key,
           x.value->>'dedupe_key' as dedupe_key,
           (x.value->>'timeout_ms')::integer as timeout_ms
      from jsonb_array_elements(p_jobs) with ordinality x
  ), ins as (
    insert into workhorse.jobs as t (id, namespace, queue, type, payload, priority, run_at, max_attempts,
                        backoff_kind, backoff_base_ms, backoff_max_ms, concurrency_key, dedupe_key, timeout_ms)
    select r.id, p_namespace, r.queue, r.type, r.payload, r.priority, r.run_at, r.max_attempts,
           r.backoff_kind, r.backoff_base_ms, r.backoff_max_ms, r.concurrency_key, r.dedupe_key, r.timeout_ms
      from rows r order by r.ord
    on conflict (namespace, dedupe_key) where dedupe_key is not null do nothing
    returning t.id
  )
  select array_agg(r.ord order by r.ord), array_agg(r.id order by r.ord),
         array_agg(r.dedupe_key order by r.ord), array_agg(ins.id is not null order by r.ord),
         array_agg(distinct r.queue) filter (where ins.id is not null and r.run_at <= now())
    into v_ord, v_id, v_key, v_created, v_queues
    from rows r left join ins on ins.id = r.id;

  perform pg_notify('workhorse:' || p_namespace, q) from unnest(v_queues) q;

  -- A fresh statement (and snapshot) finds the winners of dedupe conflicts,
  -- including rows committed by concurrent enqueues we waited for.
  return query
  select u.o, case when u.c then u.i else e.id end, u.c
    from unnest(v_ord, v_id, v_key, v_created) as u(o, i, k, c)
    left join workhorse.jobs e on not u.c and e.namespace = p_namespace and e.dedupe_key = u.k
   order by u.o;
end $$;

create function workhorse.enqueue_v1(p_namespace text, p_job jsonb)
returns table (id bigint, created boolean) language sql as $$
  select m.id, m.created from workhorse.enqueue_many_v1(p_namespace, jsonb_build_array(p_job)) m
$$;

------------------------------------------------------------------------------
-- Claim
------------------------------------------------------------------------------

-- Claims up to p_limit due jobs of one queue. Walks jobs_ready_idx in claim
-- order, skips rows other claimers hold (SKIP LOCKED), types this worker has
-- no handler for, jobs whose timeout exceeds p_max_timeout_ms (ticks) and
-- jobs whose concurrency key is held; takes each key's gate at most once per
-- batch (ON CONFLICT DO NOTHING settles races between claimers); bumps
-- `execution` and `attempt` and writes the lease rows. One statement.
create function workhorse.claim_queue_v1(
  p_namespace text, p_worker_id text, p_queue text, p_types text[], p_limit integer,
  p_lease_ms integer, p_max_timeout_ms integer)
returns setof workhorse.claimed_job language plpgsql
-- No JIT: the claim's cost estimate grows with the ready set, and past
-- jit_above_cost every claim was JIT-compiled (78 ms instead of 1.5 ms for a
-- claim of 10 with 200,000 ready jobs; the plan itself, an ordered scan of
-- jobs_ready_idx, is right). PL/pgSQL rather than SQL: the statement is
-- parsed once per session instead of on every call (about 1 ms less per
-- claim, which is most of an idle worker's enqueue-to-start time). Never
-- force a generic plan here: with LIMIT unknown the planner assumes a tenth
-- of the ready set and, past a few hundred thousand rows, sorts the whole
-- set (measured: 745 ms per claim of 500 with 600,000 ready jobs).
set jit = off
as $$
begin
  return query
  with cand as (
    select j.id, j.concurrency_key, j.priority, j.run_at
      from workhorse.jobs j
     where j.namespace = p_namespace and j.queue = p_queue and j.status = 'ready'
       and j.run_at <= now()
       and j.type = any(p_types)
       and (p_max_timeout_ms is null or j.timeout_ms is null or j.timeout_ms <= p_max_timeout_ms)
       and (j.concurrency_key is null or not exists (
             select 1 from workhorse.job_gates g where g.namespace = p_namespace and g.key = j.concurrency_key))
     order by j.priority, j.run_at, j.id
     limit p_limit
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
  ), lease as (
    insert into workhorse.job_runtime (job_id, namespace, worker_id, queue, execution, expires_at)
    select u.id, p_namespace, p_worker_id, u.queue, u.execution, now() + p_lease_ms * interval '1 millisecond'
      from upd u
  )
  select u.id, u.queue, u.type, u.payload, u.priority, extract(epoch from u.run_at)::double precision * 1000,
         u.attempt, u.max_attempts, u.execution, u.timeout_ms, u.concurrency_key, u.progress,
         extract(epoch from u.created_at)::double precision * 1000,
         extract(epoch from now() + p_lease_ms * interval '1 millisecond')::double precision * 1000
    from upd u
   order by u.priority, u.run_at, u.id;
end $$;

-- Claims up to p_limit jobs across this worker's queues, in the order given
-- (callers rotate it). Paused queues are skipped; a queue with a fleet-wide
-- concurrency limit or a rate limit is claimed under its queue row lock so
-- two claimers cannot both take the last slot or token.
create function workhorse.claim_many_v1(
  p_namespace text, p_worker_id text, p_queues text[], p_types text[], p_limit integer,
  p_lease_ms integer, p_max_timeout_ms integer default null)
returns setof workhorse.claimed_job language plpgsql as $$
declare
  v_left integer := p_limit;
  v_allowed integer;
  v_got integer;
  v_queue text;
  q workhorse.queues;
begin
  if p_limit <= 0 or cardinality(p_types) = 0 then return; end if;
  foreach v_queue in array p_queues loop
    exit when v_left <= 0;
    select * into q from workhorse.queues where namespace = p_namespace and name = v_queue;
    if not found or (not q.paused and q.concurrency_limit is null and q.rate_limit is null) then
      return query select * from workhorse.claim_queue_v1(
        p_namespace, p_worker_id, v_queue, p_types, v_left, p_lease_ms, p_max_timeout_ms);
      get diagnostics v_got = row_count;
      v_left := v_left - v_got;
      continue;
    end if;
    continue when q.paused;
    select * into q from workhorse.queues where namespace = p_namespace and name = v_queue for update;
    continue when q.paused;
    v_allowed := v_left;
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
    if v_allowed > 0 then
      return query select * from workhorse.claim_queue_v1(
        p_namespace, p_worker_id, v_queue, p_types, v_allowed, p_lease_ms, p_max_timeout_ms);
      get diagnostics v_got = row_count;
      v_left := v_left - v_got;
    else
      v_got := 0;
    end if;
    if q.rate_limit is not null then
      update workhorse.queues set tokens = q.tokens - v_got, refilled_at = now()
       where namespace = p_namespace and name = v_queue;
    end if;
  end loop;
end $$;

-- The single-job form of claim_many_v1, same semantics.
create function workhorse.claim_v1(
  p_namespace text, p_worker_id text, p_queues text[], p_types text[], p_lease_ms integer,
  p_max_timeout_ms integer default null)
returns setof workhorse.claimed_job language sql as $$
  select * from workhorse.claim_many_v1(p_namespace, p_worker_id, p_queues, p_types, 1, p_lease_ms, p_max_timeout_ms)
$$;

------------------------------------------------------------------------------
-- Recovery
------------------------------------------------------------------------------

-- Makes up to p_limit expired leases' jobs ready again (or `failed` when the
-- expired execution was the last allowed attempt), marks workers silent for
-- 7 heartbeats dead and removes rows dead for a further minute. Leases a
-- transactional step is holding are skipped (SKIP LOCKED) until it ends.
create function workhorse.recover_expired_v1(p_namespace text, p_limit integer default 100)
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
    returning r.job_id, r.execution, r.worker_id, r.claimed_at
  ), upd as (
    update workhorse.jobs j
       set status = case when j.attempt >= j.max_attempts then 'failed' else 'ready' end,
           run_at = now(),
           finished_at = case when j.attempt >= j.max_attempts then now() end,
           last_error = jsonb_build_object('name', 'LeaseExpired',
                          'message', 'lease expired: worker ' || d.worker_id || ' stopped heartbeating',
                          'attempt', j.attempt, 'worker', d.worker_id),
           updated_at = now()
      from del d
     where j.id = d.job_id and j.execution = d.execution
    returning j.id, j.execution, j.attempt, j.queue, j.status, j.last_error, d.worker_id, d.claimed_at
  ), gates as (
    delete from workhorse.job_gates g using upd where g.namespace = p_namespace and g.job_id = upd.id
  ), ledger as (
    insert into workhorse.job_attempts (job_id, execution, attempt, namespace, worker_id, outcome, error, started_at)
    select upd.id, upd.execution, upd.attempt, p_namespace, upd.worker_id, 'recovered', upd.last_error, upd.claimed_at
      from upd
    on conflict do nothing
  ), notified as (
    select pg_notify('workhorse:' || p_namespace, q.queue)
      from (select distinct upd.queue from upd where upd.status = 'ready') q
  )
  select count(*) into v_recovered from upd, (select count(*) from notified) n;

  update workhorse.worker_registry w set state = 'dead'
   where w.namespace = p_namespace and w.state <> 'dead'
     and w.last_seen < now() - 7 * w.heartbeat_ms * interval '1 millisecond';
  delete from workhorse.worker_registry w
   where w.namespace = p_namespace and w.state = 'dead'
     and w.last_seen < now() - 7 * w.heartbeat_ms * interval '1 millisecond' - interval '1 minute';
  return v_recovered;
end $$;

------------------------------------------------------------------------------
-- Heartbeat
------------------------------------------------------------------------------

-- One statement per worker whatever its load: refreshes the registry row,
-- extends every lease it still owns, and runs a bounded recovery pass.
-- `accepted` lists the job ids whose (job, execution) lease is still this
-- worker's; the worker aborts every other handler. `registered` is false
-- when the registry row is gone (the worker was declared dead): the worker
-- registers again. `paused` is the operator pause stored in the registry.
create function workhorse.heartbeat_many_v1(
  p_namespace text, p_worker_id text, p_job_ids bigint[], p_executions integer[],
  p_active integer, p_lease_ms integer, p_recover_limit integer default 100)
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

  -- The heartbeat never waits for a lease row: one locked by someone else
  -- is being settled, cancelled or recovered right now, so extending it
  -- does not matter, and not waiting means a heartbeat can never deadlock
  -- with the same worker's settlements. NO KEY UPDATE does not conflict with
  -- a transactional step's KEY SHARE lock, so those leases are extended.
  update workhorse.job_runtime r
     set expires_at = now() + p_lease_ms * interval '1 millisecond'
   where r.job_id in (
     select l.job_id from workhorse.job_runtime l
       join unnest(p_job_ids, p_executions) as t(job_id, execution)
         on l.job_id = t.job_id and l.execution = t.execution
      where l.worker_id = p_worker_id
      for no key update of l skip locked);

  -- Accepted: every lease still this worker's at this execution, extended
  -- or not (a fresh snapshot: a settlement or recovery that committed
  -- meanwhile has removed its row).
  select coalesce(array_agg(r.job_id), '{}') into v_accepted
    from workhorse.job_runtime r
    join unnest(p_job_ids, p_executions) as t(job_id, execution)
      on r.job_id = t.job_id and r.execution = t.execution
   where r.worker_id = p_worker_id;

  return query select v_accepted, coalesce(v_registered, false), coalesce(v_paused, false),
    case when p_recover_limit > 0 then workhorse.recover_expired_v1(p_namespace, p_recover_limit) else 0 end;
end $$;

------------------------------------------------------------------------------
-- Settle
------------------------------------------------------------------------------

-- Completes a batch under the fence. Returns the ids that were accepted; an
-- id missing from the result was refused (its lease is gone or re-claimed)
-- and nothing was written for it.
create function workhorse.complete_many_v1(
  p_namespace text, p_job_ids bigint[], p_executions integer[], p_results jsonb[])
returns setof bigint language plpgsql
-- PL/pgSQL with a generic plan: planned once per session, not on every batch.
set plan_cache_mode = force_generic_plan
as $$
begin
  return query
  with del as (
    delete from workhorse.job_runtime r
     using unnest(p_job_ids, p_executions, p_results) as t(job_id, execution, result)
     where r.job_id = t.job_id and r.execution = t.execution and r.namespace = p_namespace
    returning r.job_id, r.execution, r.worker_id, r.claimed_at, t.result
  ), upd as (
    update workhorse.jobs j
       set status = 'succeeded', result = d.result, finished_at = now(), updated_at = now()
      from del d
     where j.id = d.job_id and j.execution = d.execution
    returning j.id, j.attempt, j.concurrency_key, d.execution, d.worker_id, d.claimed_at
  ), gates as (
    delete from workhorse.job_gates g using upd
     where upd.concurrency_key is not null and g.namespace = p_namespace and g.key = upd.concurrency_key
       and g.job_id = upd.id
  ), ledger as (
    insert into workhorse.job_attempts (job_id, execution, attempt, namespace, worker_id, outcome, started_at)
    select upd.id, upd.execution, upd.attempt, p_namespace, upd.worker_id, 'succeeded', upd.claimed_at from upd
  )
  select upd.id from upd;
end $$;

-- Fails a batch under the fence. Each failure retries with the job's backoff
-- policy (or p_retry_delays_ms[i] when not null) until max_attempts, then
-- ends `failed`; p_final[i] = true ends it `failed` at once. Returns the
-- accepted ids with the status each ended in.
create function workhorse.fail_many_v1(
  p_namespace text, p_job_ids bigint[], p_executions integer[], p_errors jsonb[],
  p_retry_delays_ms integer[] default null, p_final boolean[] default null)
returns table (id bigint, status text, run_at timestamptz) language plpgsql
set plan_cache_mode = force_generic_plan
as $$
#variable_conflict use_column
begin
  return query
  with input as (
    select t.job_id, t.execution, t.error, t.delay_ms, coalesce(t.final, false) as final
      from unnest(p_job_ids, p_executions, p_errors,
                  coalesce(p_retry_delays_ms, array_fill(null::integer, array[cardinality(p_job_ids)])),
                  coalesce(p_final, array_fill(false, array[cardinality(p_job_ids)])))
           as t(job_id, execution, error, delay_ms, final)
  ), del as (
    delete from workhorse.job_runtime r using input i
     where r.job_id = i.job_id and r.execution = i.execution and r.namespace = p_namespace
    returning r.job_id, r.execution, r.worker_id, r.claimed_at, i.error, i.delay_ms, i.final
  ), upd as (
    update workhorse.jobs j
       set status = case when d.final or j.attempt >= j.max_attempts then 'failed' else 'ready' end,
           run_at = case when d.final or j.attempt >= j.max_attempts then j.run_at
                         else now() + coalesce(d.delay_ms::double precision,
                                 workhorse.backoff_ms_v1(j.backoff_kind, j.backoff_base_ms, j.backoff_max_ms, j.attempt))
                              * interval '1 millisecond' end,
           finished_at = case when d.final or j.attempt >= j.max_attempts then now() end,
           last_error = d.error, updated_at = now()
      from del d
     where j.id = d.job_id and j.execution = d.execution
    returning j.id, j.status, j.run_at, j.attempt, j.concurrency_key, d.execution, d.worker_id, d.claimed_at, d.error
  ), gates as (
    delete from workhorse.job_gates g using upd
     where upd.concurrency_key is not null and g.namespace = p_namespace and g.key = upd.concurrency_key
       and g.job_id = upd.id
  ), ledger as (
    insert into workhorse.job_attempts (job_id, execution, attempt, namespace, worker_id, outcome, error, started_at)
    select upd.id, upd.execution, upd.attempt, p_namespace, upd.worker_id,
           case when upd.status = 'failed' then 'failed' else 'retried' end, upd.error, upd.claimed_at
      from upd
  )
  select upd.id, upd.status, upd.run_at from upd;
end $$;

------------------------------------------------------------------------------
-- Writes a running handler makes, under the fence
------------------------------------------------------------------------------

-- Raised (SQLSTATE WH409) when a write's (job, execution) lease is gone.
create function workhorse.raise_stale_v1(p_job_id bigint, p_execution integer)
returns void language plpgsql as $$
begin
  raise exception 'stale lease: job % execution % is no longer leased by this owner', p_job_id, p_execution
    using errcode = 'WH409';
end $$;

create function workhorse.set_progress_v1(p_namespace text, p_job_id bigint, p_execution integer, p_progress jsonb)
returns void language plpgsql as $$
begin
  update workhorse.jobs j set progress = p_progress, updated_at = now()
   where j.id = p_job_id and j.namespace = p_namespace and j.status = 'running'
     and exists (select 1 from workhorse.job_runtime r
                  where r.job_id = p_job_id and r.execution = p_execution);
  if not found then perform workhorse.raise_stale_v1(p_job_id, p_execution); end if;
end $$;

-- Records a step's result under the fence. Refused (WH409) when stale.
-- Returns the recorded result: an earlier record wins over this one.
create function workhorse.record_step_v1(
  p_namespace text, p_job_id bigint, p_execution integer, p_name text, p_result jsonb)
returns jsonb language plpgsql as $$
declare
  v_result jsonb;
begin
  perform 1 from workhorse.job_runtime r
   where r.job_id = p_job_id and r.execution = p_execution and r.namespace = p_namespace
   for key share;
  if not found then perform workhorse.raise_stale_v1(p_job_id, p_execution); end if;
  insert into workhorse.job_steps (job_id, name, result, execution)
  values (p_job_id, p_name, p_result, p_execution)
  on conflict (job_id, name) do nothing;
  select s.result into v_result from workhorse.job_steps s where s.job_id = p_job_id and s.name = p_name;
  return v_result;
end $$;

-- Opens a transactional step: inside the caller's transaction, holds the
-- lease row (KEY SHARE: heartbeats may extend it, recovery and settlement
-- wait) so the fence cannot move until commit, and returns the recorded
-- result if the step already ran. Refused (WH409) when stale.
create function workhorse.begin_tx_step_v1(p_namespace text, p_job_id bigint, p_execution integer, p_name text)
returns table (recorded boolean, result jsonb) language plpgsql as $$
begin
  perform 1 from workhorse.job_runtime r
   where r.job_id = p_job_id and r.execution = p_execution and r.namespace = p_namespace
   for key share;
  if not found then perform workhorse.raise_stale_v1(p_job_id, p_execution); end if;
  return query select true, s.result from workhorse.job_steps s where s.job_id = p_job_id and s.name = p_name;
  if not found then return query select false, null::jsonb; end if;
end $$;

------------------------------------------------------------------------------
-- Operator actions
------------------------------------------------------------------------------

-- Cancels a job that has not ended. A running job loses its lease at once:
-- its worker's next heartbeat aborts the handler, and its settle is refused.
-- Returns the status after the call (unchanged when already terminal), or
-- no row when the job does not exist.
create function workhorse.cancel_v1(p_namespace text, p_job_id bigint)
returns table (status text) language plpgsql as $$
declare
  v_status text;
  v_lease workhorse.job_runtime;
begin
  -- Lease first, then job: the order settlements lock them in.
  perform 1 from workhorse.job_runtime r where r.job_id = p_job_id for update;
  select j.status into v_status from workhorse.jobs j
   where j.id = p_job_id and j.namespace = p_namespace for update;
  if not found then return; end if;
  if v_status in ('succeeded', 'failed', 'cancelled') then
    return query select v_status; return;
  end if;
  delete from workhorse.job_runtime r where r.job_id = p_job_id returning * into v_lease;
  update workhorse.jobs j set status = 'cancelled', finished_at = now(), updated_at = now()
   where j.id = p_job_id;
  perform workhorse.release_gates_v1(p_namespace, array[p_job_id]);
  if v_lease.job_id is not null then
    insert into workhorse.job_attempts (job_id, execution, attempt, namespace, worker_id, outcome, started_at)
    select j.id, j.execution, j.attempt, p_namespace, v_lease.worker_id, 'cancelled', v_lease.claimed_at
      from workhorse.jobs j where j.id = p_job_id
    on conflict do nothing;
  end if;
  return query select 'cancelled'::text;
end $$;

-- Makes a failed or cancelled job ready now with a fresh attempt budget, or
-- pulls a scheduled ready job forward to now. Returns the status after the
-- call, or no row when the job does not exist; a succeeded or running job
-- is left as it is and its status returned.
create function workhorse.retry_v1(p_namespace text, p_job_id bigint)
returns table (status text) language plpgsql as $$
declare
  v_status text;
  v_queue text;
begin
  select j.status, j.queue into v_status, v_queue from workhorse.jobs j
   where j.id = p_job_id and j.namespace = p_namespace for update;
  if not found then return; end if;
  if v_status in ('failed', 'cancelled', 'ready') then
    update workhorse.jobs j
       set status = 'ready', attempt = case when v_status = 'ready' then j.attempt else 0 end,
           run_at = now(), finished_at = null, updated_at = now()
     where j.id = p_job_id;
    perform pg_notify('workhorse:' || p_namespace, v_queue);
    return query select 'ready'::text; return;
  end if;
  return query select v_status;
end $$;

-- Creates or changes a queue's policy. Null arguments leave a field as it is;
-- a negative limit clears it.
create function workhorse.set_queue_v1(
  p_namespace text, p_queue text, p_paused boolean, p_concurrency_limit integer,
  p_rate_limit integer, p_rate_period_ms integer)
returns setof workhorse.queues language plpgsql as $$
begin
  insert into workhorse.queues (namespace, name) values (p_namespace, p_queue) on conflict do nothing;
  return query
  update workhorse.queues q set
    paused = coalesce(p_paused, q.paused),
    concurrency_limit = case when p_concurrency_limit is null then q.concurrency_limit
                             when p_concurrency_limit < 0 then null else p_concurrency_limit end,
    rate_limit = case when p_rate_limit is null then q.rate_limit
                      when p_rate_limit < 0 then null else p_rate_limit end,
    rate_period_ms = coalesce(p_rate_period_ms, q.rate_period_ms),
    tokens = case when p_rate_limit is not null and p_rate_limit > 0 then p_rate_limit else q.tokens end,
    refilled_at = now(), updated_at = now()
   where q.namespace = p_namespace and q.name = p_queue
  returning q.*;
  if p_paused = false then perform pg_notify('workhorse:' || p_namespace, p_queue); end if;
end $$;

-- Stores an operator pause on a worker's registry row; the worker picks it up
-- on its next heartbeat. Returns false when no such worker is registered.
create function workhorse.set_worker_paused_v1(p_namespace text, p_worker_id text, p_paused boolean)
returns boolean language plpgsql as $$
begin
  update workhorse.worker_registry set operator_paused = p_paused
   where namespace = p_namespace and id = p_worker_id;
  return found;
end $$;

------------------------------------------------------------------------------
-- Reads for operators
------------------------------------------------------------------------------

create function workhorse.get_job_v1(p_namespace text, p_job_id bigint)
returns setof workhorse.jobs language sql stable as $$
  select * from workhorse.jobs where namespace = p_namespace and id = p_job_id
$$;

-- Newest first, keyset-paginated by id (p_before_id is the last id seen).
create function workhorse.list_jobs_v1(
  p_namespace text, p_status text, p_queue text, p_type text, p_limit integer, p_before_id bigint)
returns setof workhorse.jobs language sql stable as $$
  select * from workhorse.jobs j
   where j.namespace = p_namespace
     and (p_status is null or j.status = p_status)
     and (p_queue is null or j.queue = p_queue)
     and (p_type is null or j.type = p_type)
     and (p_before_id is null or j.id < p_before_id)
   order by j.id desc
   limit p_limit
$$;

create function workhorse.list_workers_v1(p_namespace text)
returns setof workhorse.worker_registry language sql stable as $$
  select * from workhorse.worker_registry where namespace = p_namespace order by started_at, id
$$;

-- Every queue that has a policy row or holds jobs, with counts by status.
create function workhorse.list_queues_v1(p_namespace text)
returns table (name text, paused boolean, concurrency_limit integer, rate_limit integer,
               rate_period_ms integer, ready bigint, running bigint, waiting bigint)
language sql stable as $$
  -- Each count walks the structure that already holds only those rows: the
  -- ready index, the lease table, the waiting index.
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
         coalesce(q.rate_period_ms, 1000), coalesce(c.ready, 0), coalesce(c.running, 0), coalesce(c.waiting, 0)
    from (select * from workhorse.queues where namespace = p_namespace) q
    full join counts c on c.queue = q.name
   order by 1
$$;

-- The leases of a namespace (the demo's and operators' view of who holds what).
create function workhorse.list_leases_v1(p_namespace text)
returns table (job_id bigint, worker_id text, execution integer, expires_at timestamptz, expires_in_ms bigint)
language sql stable as $$
  select r.job_id, r.worker_id, r.execution, r.expires_at,
         (extract(epoch from r.expires_at - now()) * 1000)::bigint
    from workhorse.job_runtime r where r.namespace = p_namespace order by r.job_id
$$;

-- settle: record handler outcomes under the fence, a batch per statement.
--
-- The fence is the lease: the lease row (job id, execution) is locked, the
-- job row is written once, with the lease's attempt and execution (the
-- claim left it untouched), and the lease is deleted last. A
-- first attempt that succeeds writes no ledger row: the job row holds its
-- outcome; retries, failures, recoveries and successes after a retry are in
-- the ledger. The job is matched on its id from the locked lease, never on
-- a status predicate (that once made the planner walk every running row per
-- settled job: 835 ms instead of 11 ms for 500 jobs). A generic plan
-- (planned once per session) is right here: the input is the batch, whatever
-- the table size. But the plan must not follow the lease table's statistics:
-- planned while the table was small, the batch was hash-joined with a
-- sequential scan of it, and the same plan then read every page of the
-- table on every settlement once churn had bloated it (10,000 pages after
-- a 400,000-job drain between two autovacuum visits). The settlement
-- functions therefore turn off sequential scans, hash and merge joins and
-- materialization: each lease is found by its primary key.

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
comment on function workhorse.backoff_ms_v1(text, integer, integer, integer) is
  'The delay in milliseconds before the attempt after p_attempt: fixed = base; linear = base * attempt; exponential = base * 2^(attempt - 1); capped at max.';

create function workhorse.release_gates_v1(p_namespace text, p_job_ids bigint[])
returns void language sql as $$
  delete from workhorse.job_gates g
   where g.namespace = p_namespace and g.job_id = any(p_job_ids)
$$;
comment on function workhorse.release_gates_v1(text, bigint[]) is
  'Deletes the concurrency-key gates held by these jobs.';

create function workhorse.drop_leases_v1(p_namespace text, p_job_ids bigint[], p_executions bigint[])
returns void language sql as $$
  delete from workhorse.job_runtime r
   using unnest(p_job_ids, p_executions) as t(job_id, execution)
   where r.job_id = t.job_id and r.execution = t.execution and r.namespace = p_namespace
$$;
comment on function workhorse.drop_leases_v1(text, bigint[], bigint[]) is
  'Deletes the leases (job id, execution) of a settlement, a recovery pass or a deregistration, after their job rows are written (see complete_many_v1 for why last).';

-- Job lifecycle events: when the namespace asked for them (never for the
-- built-in sys.* jobs: each sys.outbox pass would otherwise publish an event
-- about itself, and the sinks would never be quiet)
-- (workhorse.outbox_lifecycle, set by set_outbox_lifecycle_v1 in
-- outbox.sql), a settlement publishes one outbox event per job in the same
-- statement, payload { event, jobId, type, queue, attempt, maxAttempts,
-- result (succeeded) or error }: workhorse.job.succeeded, workhorse.job.failed (an attempt
-- failed and will be retried) or workhorse.job.dead (failed for good), key
-- job:<id> so one job's events stay in order.
create function workhorse.publishes_lifecycle_v1(p_namespace text, p_event text)
returns boolean language sql stable as $$
  select coalesce((select p_event = any(l.events) from workhorse.outbox_lifecycle l where l.namespace = p_namespace), false)
$$;
comment on function workhorse.publishes_lifecycle_v1(text, text) is
  'Whether the namespace publishes the job lifecycle event p_event (succeeded, failed, dead, decision) through the outbox (workhorse.outbox_lifecycle).';

-- One payload for every event a settlement (or a recovery pass) publishes.
create function workhorse.settlement_event_v1(
  p_event text, p_job_id bigint, p_type text, p_queue text, p_attempt integer, p_max_attempts integer, p_outcome jsonb)
returns jsonb language sql immutable as $$
  select jsonb_build_object('event', p_event, 'jobId', p_job_id::text, 'type', p_type, 'queue', p_queue,
                            'attempt', p_attempt, 'maxAttempts', p_max_attempts,
                            case when p_event = 'succeeded' then 'result' else 'error' end, p_outcome)
$$;
comment on function workhorse.settlement_event_v1(text, bigint, text, text, integer, integer, jsonb) is
  'The payload of a job lifecycle event written by a settlement or a recovery pass: { event, jobId, type, queue, attempt, maxAttempts } with result (succeeded) or error (failed, dead) = p_outcome.';

create function workhorse.complete_many_v1(
  p_namespace text, p_job_ids bigint[], p_executions bigint[], p_results jsonb[])
returns setof bigint language plpgsql
-- PL/pgSQL with a generic plan: planned once per session, not on every batch.
set plan_cache_mode = force_generic_plan
-- Each lease by its primary key, whatever the planner believes the lease
-- table's size to be (see the header).
set enable_seqscan = off
set enable_hashjoin = off
set enable_mergejoin = off
set enable_material = off
as $$
declare
  v_ids bigint[];
  v_parents bigint[];
begin
  perform workhorse.check_lengths_v1('complete_many_v1', cardinality(p_job_ids), cardinality(p_executions), cardinality(p_results));
  -- The leases are locked first and deleted last, after the job rows are
  -- written: a claimer whose snapshot predates a lease may hold its job row
  -- (FOR UPDATE) while its ON CONFLICT waits on that lease. A lease merely
  -- locked makes it give up at once; one already deleted would make it wait
  -- for us while we wait for it (a deadlock).
  with held as (
    select r.job_id, r.execution, r.attempt, r.worker_id, r.claimed_at, t.result
      from workhorse.job_runtime r
      join unnest(p_job_ids, p_executions, p_results) as t(job_id, execution, result)
        on r.job_id = t.job_id and r.execution = t.execution
     where r.namespace = p_namespace
       for update of r
  ), upd as (
    update workhorse.jobs j
       set status = 'succeeded', result = d.result, execution = d.execution, attempt = d.attempt,
           started_at = d.claimed_at, last_worker = d.worker_id, finished_at = now(), updated_at = now()
      from held d
     where j.id = d.job_id
    returning j.id, j.attempt, j.concurrency_key, j.parent_id, d.execution, d.worker_id, d.claimed_at, j.type, j.queue, j.max_attempts, j.result
  ), gates as (
    delete from workhorse.job_gates g using upd
     where upd.concurrency_key is not null and g.namespace = p_namespace and g.key = upd.concurrency_key
       and g.job_id = upd.id
  ), ledger as (
    insert into workhorse.job_attempts (job_id, execution, attempt, namespace, worker_id, outcome, started_at)
    select upd.id, upd.execution, upd.attempt, p_namespace, upd.worker_id, 'succeeded', upd.claimed_at
      from upd where upd.attempt > 1
  ), lifecycle as (
    insert into workhorse.outbox_events (namespace, topic, key, payload)
    select p_namespace, 'workhorse.job.succeeded', 'job:' || upd.id,
           workhorse.settlement_event_v1('succeeded', upd.id, upd.type, upd.queue, upd.attempt, upd.max_attempts, upd.result)
      from upd where upd.type not like 'sys.%' and workhorse.publishes_lifecycle_v1(p_namespace, 'succeeded')
  )
  select array_agg(upd.id), array_agg(upd.parent_id) filter (where upd.parent_id is not null)
    into v_ids, v_parents from upd;
  return query select unnest(v_ids);
  perform workhorse.drop_leases_v1(p_namespace, p_job_ids, p_executions);
  -- Children that ended wake a parent joining them (parents locked after our leases are gone).
  if v_parents is not null then perform workhorse.wake_parents_v1(v_parents); end if;
  if workhorse.publishes_lifecycle_v1(p_namespace, 'succeeded') then
    perform pg_notify(workhorse.outbox_channel_v1(p_namespace), '0');
  end if;
end $$;
comment on function workhorse.complete_many_v1(text, bigint[], bigint[], jsonb[]) is
  'Completes a batch: for each (job id, execution, result) whose lease still exists at that execution, stores the result with the lease''s attempt and execution, ends the job succeeded, releases its gate, appends a succeeded row to the attempts ledger unless it was the first attempt (the job row itself records a first success), and deletes the lease (locked first, deleted last); a completed child wakes a parent joining it (wake_parents_v1); when the namespace publishes succeeded lifecycle events, writes one workhorse.job.succeeded outbox event per job and wakes the deliverers. Returns the ids accepted; an id missing from the result was refused by the fence (its lease is gone or was re-claimed) and nothing was written for it. Refuses arrays of different lengths with WH422. Safe to repeat.';

create function workhorse.fail_many_v1(
  p_namespace text, p_job_ids bigint[], p_executions bigint[], p_errors jsonb[],
  p_retry_delays_ms integer[] default null, p_final boolean[] default null)
returns table (id bigint, status text, run_at timestamptz) language plpgsql
set plan_cache_mode = force_generic_plan
-- Each lease by its primary key, whatever the planner believes the lease
-- table's size to be (see the header).
set enable_seqscan = off
set enable_hashjoin = off
set enable_mergejoin = off
set enable_material = off
as $$
#variable_conflict use_column
declare
  v_ids bigint[];
  v_statuses text[];
  v_run_ats timestamptz[];
  v_parents bigint[];
begin
  perform workhorse.check_lengths_v1('fail_many_v1', cardinality(p_job_ids), cardinality(p_executions), cardinality(p_errors),
                                     coalesce(cardinality(p_retry_delays_ms), cardinality(p_job_ids)),
                                     coalesce(cardinality(p_final), cardinality(p_job_ids)));
  with input as (
    select t.job_id, t.execution, t.error, t.delay_ms, coalesce(t.final, false) as final
      from unnest(p_job_ids, p_executions, p_errors,
                  coalesce(p_retry_delays_ms, array_fill(null::integer, array[cardinality(p_job_ids)])),
                  coalesce(p_final, array_fill(false, array[cardinality(p_job_ids)])))
           as t(job_id, execution, error, delay_ms, final)
  ), held as (
    -- Locked first, deleted last: see complete_many_v1.
    select r.job_id, r.execution, r.attempt, r.worker_id, r.claimed_at, i.error, i.delay_ms, i.final
      from workhorse.job_runtime r join input i on r.job_id = i.job_id and r.execution = i.execution
     where r.namespace = p_namespace
       for update of r
  ), upd as (
    update workhorse.jobs j
       set status = case when d.final or d.attempt >= j.max_attempts then 'failed' else 'ready' end,
           run_at = case when d.final or d.attempt >= j.max_attempts then j.run_at
                         else now() + coalesce(d.delay_ms::double precision,
                                 workhorse.backoff_ms_v1(j.backoff_kind, j.backoff_base_ms, j.backoff_max_ms, d.attempt))
                              * interval '1 millisecond' end,
           finished_at = case when d.final or d.attempt >= j.max_attempts then now() end,
           execution = d.execution, attempt = d.attempt, started_at = d.claimed_at, last_worker = d.worker_id,
           last_error = d.error, updated_at = now()
      from held d
     where j.id = d.job_id
    returning j.id, j.status, j.run_at, j.attempt, j.concurrency_key, j.parent_id, d.execution, d.worker_id, d.claimed_at, d.error,
              j.type, j.queue, j.max_attempts
  ), gates as (
    delete from workhorse.job_gates g using upd
     where upd.concurrency_key is not null and g.namespace = p_namespace and g.key = upd.concurrency_key
       and g.job_id = upd.id
  ), ledger as (
    insert into workhorse.job_attempts (job_id, execution, attempt, namespace, worker_id, outcome, error, started_at)
    select upd.id, upd.execution, upd.attempt, p_namespace, upd.worker_id,
           case when upd.status = 'failed' then 'failed' else 'retried' end, upd.error, upd.claimed_at
      from upd
  ), lifecycle as (
    insert into workhorse.outbox_events (namespace, topic, key, payload)
    select p_namespace, 'workhorse.job.' || e.event, 'job:' || upd.id,
           workhorse.settlement_event_v1(e.event, upd.id, upd.type, upd.queue, upd.attempt, upd.max_attempts, upd.error)
      from upd cross join lateral (select case when upd.status = 'failed' then 'dead' else 'failed' end as event) e
     where upd.type not like 'sys.%' and workhorse.publishes_lifecycle_v1(p_namespace, e.event)
  )
  select array_agg(upd.id), array_agg(upd.status), array_agg(upd.run_at),
         array_agg(upd.parent_id) filter (where upd.parent_id is not null and upd.status = 'failed')
    into v_ids, v_statuses, v_run_ats, v_parents from upd;
  return query select * from unnest(v_ids, v_statuses, v_run_ats);
  perform workhorse.drop_leases_v1(p_namespace, p_job_ids, p_executions);
  if v_parents is not null then perform workhorse.wake_parents_v1(v_parents); end if;
  if workhorse.publishes_lifecycle_v1(p_namespace, 'failed') or workhorse.publishes_lifecycle_v1(p_namespace, 'dead') then
    perform pg_notify(workhorse.outbox_channel_v1(p_namespace), '0');
  end if;
end $$;
comment on function workhorse.fail_many_v1(text, bigint[], bigint[], jsonb[], integer[], boolean[]) is
  'Fails a batch under the fence: for each (job id, execution, error JSON) whose lease still exists, deletes the lease and either makes the job ready again after its backoff (or p_retry_delays_ms[i] when not null) while attempts remain, or ends it failed (at once when p_final[i]); releases its gate and appends a retried or failed ledger row; a child that ended failed wakes a parent joining it (wake_parents_v1); when the namespace publishes them, writes a workhorse.job.failed (will retry) or workhorse.job.dead (failed for good) outbox event per job. Returns (id, status, run_at) for the accepted ones; an id missing was refused by the fence. Refuses arrays of different lengths with WH422. Safe to repeat.';

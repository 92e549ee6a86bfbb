-- operator: what people (the dashboard, the HTTP API, an admin script) do
-- to jobs, queues and workers. Locks are taken lease first, then job: the
-- order settlements use.

create function workhorse.cancel_job_v1(p_namespace text, p_job_id bigint, p_wake_parent boolean)
returns table (status text) language plpgsql as $$
declare
  v_status text;
  v_parent bigint;
  v_lease workhorse.job_runtime;
begin
  -- Lease first, then job: the order settlements lock them in.
  perform 1 from workhorse.job_runtime r where r.job_id = p_job_id for update;
  select j.status, j.parent_id into v_status, v_parent from workhorse.jobs j
   where j.id = p_job_id and j.namespace = p_namespace for update;
  if not found then return; end if;
  if v_status in ('succeeded', 'failed', 'cancelled') then
    return query select v_status; return;
  end if;
  delete from workhorse.job_runtime r where r.job_id = p_job_id returning * into v_lease;
  -- A running job's lease carries its attempt and execution: they become the row's.
  update workhorse.jobs j
     set status = 'cancelled', finished_at = now(), updated_at = now(),
         attempt = coalesce(v_lease.attempt, j.attempt), execution = coalesce(v_lease.execution, j.execution),
         started_at = coalesce(v_lease.claimed_at, j.started_at),
         last_worker = coalesce(v_lease.worker_id, j.last_worker)
   where j.id = p_job_id;
  perform workhorse.release_gates_v1(p_namespace, array[p_job_id]);
  if v_lease.job_id is not null then
    insert into workhorse.job_attempts (job_id, execution, attempt, namespace, worker_id, outcome, started_at)
    values (p_job_id, v_lease.execution, v_lease.attempt, p_namespace, v_lease.worker_id, 'cancelled', v_lease.claimed_at)
    on conflict do nothing;
  end if;
  if workhorse.publishes_lifecycle_v1(p_namespace, 'cancelled') then
    insert into workhorse.outbox_events (namespace, topic, key, payload)
    select p_namespace, 'workhorse.job.cancelled', 'job:' || j.id,
           jsonb_build_object('event', 'cancelled', 'jobId', j.id::text, 'type', j.type, 'queue', j.queue,
                              'attempt', j.attempt, 'maxAttempts', j.max_attempts, 'wasRunning', v_lease.job_id is not null)
      from workhorse.jobs j where j.id = p_job_id;
    perform pg_notify(workhorse.outbox_channel_v1(p_namespace), '0');
  end if;
  -- A parent joining this job learns it ended (its row locked after ours).
  if p_wake_parent and v_parent is not null then perform workhorse.wake_parents_v1(array[v_parent]); end if;
  return query select 'cancelled'::text;
end $$;
comment on function workhorse.cancel_job_v1(text, bigint, boolean) is
  'Cancels one job that has not ended (running, ready or waiting): a running job loses its lease at once (its worker''s next heartbeat aborts the handler, and its settlement is refused), its gate is released and a cancelled ledger row written; when the namespace publishes cancelled lifecycle events, a workhorse.job.cancelled outbox event { event, jobId, type, queue, attempt, maxAttempts, wasRunning } is written and the deliverers woken; with p_wake_parent, a parent joining it is woken (wake_parents_v1). Returns the status after the call (cancelled, or the terminal status it already had), or no row when the job does not exist in the namespace. Its children are cancel_v1''s business.';

create function workhorse.cancel_v1(p_namespace text, p_job_id bigint, p_cascade boolean default true)
returns table (status text) language plpgsql as $$
begin
  -- Children first, each locked and ended on its own before the parent's
  -- row is locked: a child settling now holds its lease and then wants its
  -- parent's row, so holding the parent while cancelling it would deadlock.
  if p_cascade and exists (select 1 from workhorse.jobs j
                            where j.id = p_job_id and j.namespace = p_namespace
                              and j.status not in ('succeeded', 'failed', 'cancelled')) then
    perform workhorse.cancel_children_v1(p_namespace, p_job_id);
  end if;
  return query select * from workhorse.cancel_job_v1(p_namespace, p_job_id, true);
end $$;
comment on function workhorse.cancel_v1(text, bigint, boolean) is
  'Cancels a job that has not ended, as cancel_job_v1 does, and first (p_cascade, the default) its unfinished children that were not spawned detached, recursively. Returns the status after the call (cancelled, or the terminal status it already had), or no row when the job does not exist in the namespace.';

create function workhorse.retry_v1(p_namespace text, p_job_id bigint)
returns table (status text) language plpgsql as $$
declare
  v_status text;
  v_queue text;
begin
  select j.status, j.queue into v_status, v_queue from workhorse.jobs j
   where j.id = p_job_id and j.namespace = p_namespace for update;
  if not found then return; end if;
  -- A ready job with a lease is running: it is left alone.
  if exists (select 1 from workhorse.job_runtime r where r.job_id = p_job_id) then
    return query select 'running'::text; return;
  end if;
  if v_status in ('failed', 'cancelled', 'ready') then
    update workhorse.jobs j
       set status = 'ready', attempt = case when v_status = 'ready' then j.attempt else 0 end,
           run_at = now(), finished_at = null, updated_at = now()
     where j.id = p_job_id;
    perform workhorse.notify_wake_v1(p_namespace, v_queue, 0);
    return query select 'ready'::text; return;
  end if;
  return query select v_status;
end $$;
comment on function workhorse.retry_v1(text, bigint) is
  'Makes a failed or cancelled job ready now with a fresh attempt budget (attempt = 0), or pulls a scheduled ready job forward to now, and wakes its queue (notify_wake_v1). Returns the status after the call (ready), the unchanged status of a succeeded, running or waiting job, or no row when the job does not exist.';

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
  if p_paused = false then perform workhorse.notify_wake_v1(p_namespace, p_queue, 0); end if;
end $$;
comment on function workhorse.set_queue_v1(text, text, boolean, integer, integer, integer) is
  'Creates or changes a queue''s policy row: paused, concurrency_limit (running jobs fleet-wide), rate_limit starts per rate_period_ms (a token bucket). A null argument leaves the field as it is; a negative limit clears it. Resuming wakes the queue (notify_wake_v1). Returns the row.';

create function workhorse.set_worker_paused_v1(p_namespace text, p_worker_id text, p_paused boolean)
returns boolean language plpgsql as $$
begin
  update workhorse.worker_registry set operator_paused = p_paused
   where namespace = p_namespace and id = p_worker_id;
  return found;
end $$;
comment on function workhorse.set_worker_paused_v1(text, text, boolean) is
  'Stores an operator pause on a worker''s registry row; the worker reads it at its next registry refresh (or heartbeat) and stops (or resumes) claiming. It dies with that registration. Returns false when no such worker is registered.';

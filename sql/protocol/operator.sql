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
  -- Lease first, then job: the order settlements lock them in. The job row
  -- takes NO KEY UPDATE, the lock its update needs, so it does not wait
  -- for cancel_v1's KEY SHARE (another cancel holding this job in its tree).
  perform 1 from workhorse.job_runtime r where r.job_id = p_job_id for update;
  select j.status, j.parent_id into v_status, v_parent from workhorse.jobs j
   where j.id = p_job_id and j.namespace = p_namespace for no key update;
  if not found then return; end if;
  if v_status in ('succeeded', 'failed', 'cancelled') then
    return query select v_status; return;
  end if;
  delete from workhorse.job_runtime r where r.job_id = p_job_id returning * into v_lease;
  -- A running job's lease carries its attempt and execution: they become the row's.
  -- A waiting job is mid-attempt too (a suspension counts none): the attempt it was on.
  update workhorse.jobs j
     set status = 'cancelled', finished_at = now(), updated_at = now(),
         attempt = coalesce(v_lease.attempt, j.attempt + (j.status = 'waiting')::int), execution = coalesce(v_lease.execution, j.execution),
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
      from workhorse.jobs j where j.id = p_job_id and j.type not like 'sys.%';
    perform pg_notify(workhorse.outbox_channel_v1(p_namespace), '0');
  end if;
  -- A parent joining this job learns it ended (its row locked after ours).
  if p_wake_parent and v_parent is not null then perform workhorse.wake_parents_v1(array[v_parent]); end if;
  return query select 'cancelled'::text;
end $$;
comment on function workhorse.cancel_job_v1(text, bigint, boolean) is
  'Cancels one job that has not ended (running, ready or waiting): a running job loses its lease at once (its worker''s next heartbeat aborts the handler, and its settlement is refused), its gate is released and a cancelled ledger row written; when the namespace publishes cancelled lifecycle events, a workhorse.job.cancelled outbox event { event, jobId, type, queue, attempt, maxAttempts, wasRunning } is written and the deliverers woken; with p_wake_parent, a parent joining it is woken (wake_parents_v1). Locks the lease (FOR UPDATE), then the job row (FOR NO KEY UPDATE). Returns the status after the call (cancelled, or the terminal status it already had), or no row when the job does not exist in the namespace. Its children are cancel_v1''s business.';

-- Cancelling a tree races the tree's own work: a parent spawning a child,
-- a ready job being claimed (and then spawning), children settling and
-- waking their parent. cancel_v1 takes its locks in two passes, in the
-- order the rest of the protocol takes them:
--   1. top down (a parent before its children, each level in child id
--      order), each job's lease FOR UPDATE; a job without one gets its
--      row locked FOR KEY SHARE instead. A spawn holds its parent's lease
--      KEY SHARE until it commits, so locking the lease waits for a spawn
--      in flight, and a later spawn is refused (WH409) once the lease is
--      gone; a claim locks the job row FOR UPDATE SKIP LOCKED, so it skips
--      a row held KEY SHARE. Only then are the job's children read, so
--      every child it can ever have is seen. A child settling holds its
--      lease and then wakes its parent with NO KEY UPDATE on the parent's
--      row, which KEY SHARE does not block: no deadlock.
--   2. bottom up (children before parents), each job cancelled by
--      cancel_job_v1 (lease already held, job row NO KEY UPDATE, the lease
--      deleted last), the root's own parent woken last.
-- A job already ended is left alone with its subtree; a job reached twice
-- (a dedupe key linking one job under two parents) is cancelled once.
create function workhorse.cancel_v1(p_namespace text, p_job_id bigint, p_cascade boolean default true)
returns table (status text) language plpgsql as $$
declare
  v_tree bigint[] := '{}';   -- the jobs to cancel, parents before children
  v_seen bigint[] := array[p_job_id];
  v_next bigint[] := array[p_job_id];
  v_level bigint[];
  v_id bigint;
  v_status text;
  v_root text;
  v_parent bigint;
  v_i integer;
begin
  while cardinality(v_next) > 0 loop
    v_level := v_next;
    v_next := '{}';
    foreach v_id in array v_level loop
      loop
        perform 1 from workhorse.job_runtime r where r.job_id = v_id and r.namespace = p_namespace for update;
        exit when found;
        perform 1 from workhorse.jobs j where j.id = v_id and j.namespace = p_namespace for key share;
        exit when not found;
        -- A claim that held the row committed while we waited: lock its lease.
        exit when not exists (select 1 from workhorse.job_runtime r where r.job_id = v_id);
      end loop;
      select j.status into v_status from workhorse.jobs j where j.id = v_id and j.namespace = p_namespace;
      if v_id = p_job_id then
        if not found then return; end if;
        v_root := v_status;
      end if;
      continue when v_status is null or v_status in ('succeeded', 'failed', 'cancelled');
      v_tree := v_tree || v_id;
      continue when not p_cascade;
      select v_next || coalesce(array_agg(c.child_id order by c.child_id), '{}'),
             v_seen || coalesce(array_agg(c.child_id order by c.child_id), '{}')
        into v_next, v_seen
        from workhorse.job_children c
       where c.parent_id = v_id and not c.detached and not (c.child_id = any(v_seen));
    end loop;
  end loop;
  if v_root in ('succeeded', 'failed', 'cancelled') then
    return query select v_root; return;
  end if;
  for v_i in reverse cardinality(v_tree)..1 loop
    v_id := v_tree[v_i];
    -- A job's parent is woken only when it is not being cancelled here.
    select j.parent_id into v_parent from workhorse.jobs j where j.id = v_id;
    select c.status into v_status
      from workhorse.cancel_job_v1(p_namespace, v_id, v_id = p_job_id or not (coalesce(v_parent = any(v_tree), false))) c;
  end loop;
  return query select v_status;
end $$;
comment on function workhorse.cancel_v1(text, bigint, boolean) is
  'Cancels a job that has not ended, as cancel_job_v1 does, and (p_cascade, the default) its unfinished children that were not spawned detached, recursively. Locks every lease of the tree top down first (a job without a lease: its row KEY SHARE, so no claim takes it) and reads each job''s children only after, so a spawn that races the cancel either committed before (its child is cancelled too) or is refused with WH409 afterwards (the parent''s lease is gone); then cancels the jobs bottom up. Returns the status after the call (cancelled, or the terminal status it already had), or no row when the job does not exist in the namespace.';

create function workhorse.retry_v1(p_namespace text, p_job_id bigint)
returns table (status text) language plpgsql as $$
declare
  v_status text;
  v_queue text;
  v_run_at timestamptz;
begin
  select j.status, j.queue, j.run_at into v_status, v_queue, v_run_at from workhorse.jobs j
   where j.id = p_job_id and j.namespace = p_namespace for update;
  if not found then return; end if;
  -- A ready job with a lease is running: it is left alone.
  if exists (select 1 from workhorse.job_runtime r where r.job_id = p_job_id) then
    return query select 'running'::text; return;
  end if;
  -- A ready job already due runs as soon as a worker is free: it is left as
  -- it is, keeping its place (moving run_at to now would put it behind the
  -- jobs due since), so a second retry of a retried job changes nothing.
  if v_status = 'ready' and v_run_at <= now() then
    return query select 'ready'::text; return;
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
  'Makes a failed or cancelled job ready now with a fresh attempt budget (attempt = 0), or pulls a scheduled ready job forward to now, and wakes its queue (notify_wake_v1); a ready job already due is left unchanged (its run_at and place kept). Returns the status after the call (ready), the unchanged status of a succeeded, running or waiting job, or no row when the job does not exist.';

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
  -- The sys queue's pause held outbox delivery too (outbox_lease_v1): its resume wakes the deliverers.
  if p_paused = false and p_queue = 'sys' then perform pg_notify(workhorse.outbox_channel_v1(p_namespace), '0'); end if;
end $$;
comment on function workhorse.set_queue_v1(text, text, boolean, integer, integer, integer) is
  'Creates or changes a queue''s policy row: paused, concurrency_limit (running jobs fleet-wide), rate_limit starts per rate_period_ms (a token bucket). A null argument leaves the field as it is; a negative limit clears it. Resuming wakes the queue (notify_wake_v1), and resuming sys, whose pause holds outbox delivery, the outbox''s deliverers too. Returns the row.';

create function workhorse.set_worker_paused_v1(p_namespace text, p_worker_id text, p_paused boolean)
returns boolean language plpgsql as $$
begin
  update workhorse.worker_registry set operator_paused = p_paused
   where namespace = p_namespace and id = p_worker_id;
  return found;
end $$;
comment on function workhorse.set_worker_paused_v1(text, text, boolean) is
  'Stores an operator pause on a worker''s registry row; the worker reads it at its next registry refresh (or heartbeat) and stops (or resumes) claiming. It dies with that registration. Returns false when no such worker is registered.';

-- dashboard: the reads the browser dashboard needs beyond reads.sql. A page
-- of the namespace table joined with the leases, one job's lease, attempts
-- and steps, queue depth with the oldest due job's age, per-minute
-- throughput from the attempts ledger and the backlog over the last hour,
-- and the registry's heartbeat ages against the database clock. Read-only
-- and stable. Every list walks an index that holds only the rows it wants,
-- or a bounded range of the primary key; none reads the whole jobs table.

create function workhorse.dashboard_jobs_v1(
  p_namespace text, p_status text, p_queue text, p_type text,
  p_limit integer, p_before_id bigint, p_span integer)
returns table (jobs jsonb, next_before_id bigint, searched_down_to bigint, as_of timestamptz)
language plpgsql stable
-- Every statement here walks an index: the probes of whether a namespace
-- holds any job were planned as sequential scans where the table's other
-- rows made a first match look near (and read the whole table for an empty
-- namespace).
set enable_seqscan = off
as $$
declare
  v_ids bigint[];
  v_top bigint;
  v_floor bigint;
  v_next bigint;
begin
  if p_limit < 1 or p_limit > 500 then
    raise exception 'dashboard_jobs_v1: p_limit must be 1..500, got %', p_limit using errcode = '22023';
  end if;
  if p_span < 1 then
    raise exception 'dashboard_jobs_v1: p_span must be positive, got %', p_span using errcode = '22023';
  end if;
  if p_status is not null and p_status not in ('ready', 'running', 'waiting', 'succeeded', 'failed', 'cancelled') then
    raise exception 'dashboard_jobs_v1: unknown status %', p_status using errcode = '22023';
  end if;

  -- Each status walks the structure that holds only its rows; the status is
  -- spelled literally so a generic plan can use the partial index too.
  if p_status = 'running' then
    select array_agg(x.id order by x.id desc) into v_ids from (
      select r.job_id as id from workhorse.job_runtime r
        join workhorse.jobs j on j.id = r.job_id
       where r.namespace = p_namespace
         and (p_before_id is null or r.job_id < p_before_id)
         and (p_queue is null or r.queue = p_queue)
         and (p_type is null or j.type = p_type)
       order by r.job_id desc limit p_limit + 1) x;
  elsif p_status = 'ready' then
    select array_agg(x.id order by x.id desc) into v_ids from (
      select j.id from workhorse.jobs j
       where j.namespace = p_namespace and j.status = 'ready'
         and not exists (select 1 from workhorse.job_runtime l where l.job_id = j.id)
         and (p_before_id is null or j.id < p_before_id)
         and (p_queue is null or j.queue = p_queue)
         and (p_type is null or j.type = p_type)
       order by j.id desc limit p_limit + 1) x;
  elsif p_status = 'waiting' then
    select array_agg(x.id order by x.id desc) into v_ids from (
      select j.id from workhorse.jobs j
       where j.namespace = p_namespace and j.status = 'waiting'
         and (p_before_id is null or j.id < p_before_id)
         and (p_queue is null or j.queue = p_queue)
         and (p_type is null or j.type = p_type)
       order by j.id desc limit p_limit + 1) x;
  elsif p_status in ('failed', 'cancelled') then
    select array_agg(x.id order by x.id desc) into v_ids from (
      select j.id from workhorse.jobs j
       where j.namespace = p_namespace
         and j.status in ('failed', 'cancelled') and j.status = p_status
         and (p_before_id is null or j.id < p_before_id)
         and (p_queue is null or j.queue = p_queue)
         and (p_type is null or j.type = p_type)
       order by j.id desc limit p_limit + 1) x;
  else
    -- Every job, or succeeded ones (most of the table): a window of at most
    -- p_span ids of the primary key below the cursor, so a filter that
    -- matches little still reads a bounded range.
    -- v_top is the window's highest id (inclusive: max(id) + 1 overflowed at the bigint's end).
    v_top := coalesce(p_before_id - 1, (select max(m.id) from workhorse.jobs m));
    -- Ids are shared by every namespace: a namespace with no job at all
    -- (one probe of each of its status indexes) has no window to search,
    -- however many jobs other namespaces hold.
    if v_top is null
       or (not exists (select 1 from workhorse.jobs m where m.namespace = p_namespace and m.status = 'ready')
           and not exists (select 1 from workhorse.jobs m where m.namespace = p_namespace and m.status = 'waiting')
           and not exists (select 1 from workhorse.jobs m where m.namespace = p_namespace
                              and m.status in ('succeeded', 'failed', 'cancelled'))) then
      return query select '[]'::jsonb, null::bigint, null::bigint, now();
      return;
    end if;
    v_floor := greatest(v_top - p_span + 1, 1);
    select array_agg(x.id order by x.id desc) into v_ids from (
      select j.id from workhorse.jobs j
       where j.namespace = p_namespace
         and j.id <= v_top and j.id >= v_floor
         and (p_status is null or j.status = p_status)
         and (p_queue is null or j.queue = p_queue)
         and (p_type is null or j.type = p_type)
       order by j.id desc limit p_limit + 1) x;
  end if;

  -- Each walk reads one row more than the page: whether it exists says
  -- whether an older page does, so a full last page has no cursor.
  if coalesce(cardinality(v_ids), 0) > p_limit then
    v_ids := v_ids[1:p_limit];
    v_next := v_ids[p_limit];
  elsif v_floor is not null then
    -- A window with no more matches continues from the next existing id below it (one probe
    -- of the primary key), so a gap in the ids (retention, a bumped
    -- sequence) costs no empty pages; null when nothing older exists.
    v_next := (select max(m.id) from workhorse.jobs m where m.id < v_floor) + 1;
  end if;

  -- The page's rows with their leases and where recovery last took them from.
  return query
  select coalesce(jsonb_agg(jsonb_build_object(
           'id', j.id::text, 'queue', j.queue, 'type', j.type,
           -- A ready row with a lease is running, at the lease's attempt and execution.
           'status', case when r.job_id is null then j.status else 'running' end,
           'priority', j.priority, 'run_at', j.run_at,
           'due_in_ms', (extract(epoch from j.run_at - now()) * 1000)::bigint,
           -- A waiting job is mid-attempt: the one it is on (job_as_seen_v1).
           'attempt', coalesce(r.attempt, j.attempt + (j.status = 'waiting')::int), 'max_attempts', j.max_attempts,
           'execution', coalesce(r.execution, j.execution),
           'concurrency_key', j.concurrency_key, 'dedupe_key', j.dedupe_key,
           'created_at', j.created_at, 'finished_at', j.finished_at,
           'error_message', left(j.last_error ->> 'message', 200),
           'leased_by', r.worker_id,
           'lease_expires_in_ms', (extract(epoch from r.expires_at - now()) * 1000)::bigint,
           'lease_started', r.started,
           'recovered_from', rec.worker_id,
           'gate_held_by', gate.job_id::text,
           'wait_kind', wt.kind, 'wait_name', wt.name, 'wait_key', wt.key, 'wait_others', wt.others,
           'wait_wake_in_ms', (extract(epoch from wt.wake_at - now()) * 1000)::bigint) order by j.id desc), '[]'::jsonb),
         v_next, v_floor, now()
    from workhorse.jobs j
    left join workhorse.job_runtime r on r.job_id = j.id
    left join lateral (
      select a.worker_id from workhorse.job_attempts a
       where a.job_id = j.id and a.outcome in ('recovered', 'orphaned')
       order by a.execution desc limit 1) rec on true
    left join workhorse.job_gates gate
      on gate.namespace = j.namespace and gate.key = j.concurrency_key and gate.job_id <> j.id
    -- A waiting job's open wait, through the waits' primary key (job_id, name),
    -- and how many others it waits on beside it (waits opened together).
    left join lateral (
      select w.kind, w.name, w.key, w.wake_at, (count(*) over ()) - 1 as others from workhorse.job_waits w
       where j.status = 'waiting' and w.job_id = j.id and w.resolved_at is null
       order by w.started_at desc limit 1) wt on true
   where j.id = any (v_ids);
end $$;
comment on function workhorse.dashboard_jobs_v1(text, text, text, text, integer, bigint, integer) is
  'One page of the namespace table, newest first: jobs of p_namespace filtered by status, queue and type when not null, at most p_limit (1..500), keyset-paginated by id below p_before_id. A status other than succeeded walks the structure holding only its rows (ready, waiting and dead-job indexes, the lease table); every job (no status) and succeeded ones read a window of at most p_span ids below the cursor (the newest id when there is none), so a sparse filter costs a bounded range. Returns one row: jobs (a JSON array of the jobs'' columns without payload, result or progress, ids as strings, plus due_in_ms: run_at against the database clock; the lease: leased_by, lease_expires_in_ms, lease_started; recovered_from: the worker whose expired lease the recovery pass last took the job from; gate_held_by: the other job holding the gate of its concurrency key; error_message: the first 200 characters of last_error.message; a waiting job''s open wait: wait_kind, wait_name, wait_key, wait_wake_in_ms: its wake time or timeout against the database clock, null when it has none; wait_others: how many other open waits it has), next_before_id (the cursor of the next page: the last id of a page with more matches below it in the structure or window walked, or else one above the highest existing id below the window searched, so the next window starts at an actual job however wide a gap in the ids; null when nothing older exists), searched_down_to (the bottom of that window, null for status pages) and as_of (the database clock). Refuses an unknown status, a limit outside 1..500 or a span below 1 with SQLSTATE 22023.';

create function workhorse.dashboard_job_lease_v1(p_namespace text, p_job_id bigint)
returns table (worker_id text, execution bigint, claimed_at timestamptz, expires_at timestamptz,
               expires_in_ms bigint, started boolean)
language sql stable as $$
  select r.worker_id, r.execution, r.claimed_at, r.expires_at,
         (extract(epoch from r.expires_at - now()) * 1000)::bigint, r.started
    from workhorse.job_runtime r where r.job_id = p_job_id and r.namespace = p_namespace
$$;
comment on function workhorse.dashboard_job_lease_v1(text, bigint) is
  'The live lease of one job (worker, execution, claim and expiry times, milliseconds left on the database clock, whether its handler started), or no row.';

create function workhorse.dashboard_job_attempts_v1(p_namespace text, p_job_id bigint)
returns table (execution bigint, attempt integer, worker_id text, outcome text, error jsonb,
               started_at timestamptz, finished_at timestamptz, duration_ms bigint)
language sql stable as $$
  select x.* from (
    select a.execution, a.attempt, a.worker_id, a.outcome, a.error, a.started_at, a.finished_at,
           (extract(epoch from a.finished_at - a.started_at) * 1000)::bigint
      from workhorse.job_attempts a
     where a.job_id = p_job_id and a.namespace = p_namespace
    union all
    -- A first attempt that succeeded has no ledger row: its job row holds it.
    select j.execution, j.attempt, j.last_worker, 'succeeded', null, j.started_at, j.finished_at,
           (extract(epoch from j.finished_at - j.started_at) * 1000)::bigint
      from workhorse.jobs j
     where j.id = p_job_id and j.namespace = p_namespace and j.status = 'succeeded'
       and not exists (select 1 from workhorse.job_attempts a where a.job_id = j.id and a.execution = j.execution)
  ) x
   order by x.execution
$$;
comment on function workhorse.dashboard_job_attempts_v1(text, bigint) is
  'The attempts of one job, oldest execution first (the ledger, plus the first attempt that succeeded, which the job row holds): attempt number, worker, outcome (succeeded, failed, retried, recovered, orphaned, cancelled, released), error, start and finish times and the duration in ms (null when it never started). No rows for a job of another namespace.';

create function workhorse.dashboard_job_steps_v1(p_namespace text, p_job_id bigint)
returns table (name text, result jsonb, execution bigint, created_at timestamptz)
language sql stable as $$
  select s.name, s.result, s.execution, s.created_at
    from workhorse.job_steps s
    join workhorse.jobs j on j.id = s.job_id and j.namespace = p_namespace
   where s.job_id = p_job_id
   order by s.created_at, s.name
$$;
comment on function workhorse.dashboard_job_steps_v1(text, bigint) is
  'The recorded steps of one job in the order they were recorded: name, result, the execution that recorded it and when. No rows for a job of another namespace.';

create function workhorse.dashboard_job_family_v1(p_namespace text, p_job_id bigint, p_limit integer)
returns table (relation text, name text, job_id bigint, type text, status text, detached boolean)
language sql stable as $$
  -- The parent through job_children's unique child_id, the children through
  -- its primary key (parent_id, name); each job by its primary key.
  (select 'parent'::text, c.name, p.id, p.type,
          case when r.job_id is null then p.status else 'running' end, c.detached
     from workhorse.job_children c
     join workhorse.jobs p on p.id = c.parent_id and p.namespace = p_namespace
     left join workhorse.job_runtime r on r.job_id = p.id
    where c.child_id = p_job_id)
  union all
  (select 'child'::text, c.name, k.id, k.type,
          case when r.job_id is null then k.status else 'running' end, c.detached
     from workhorse.job_children c
     join workhorse.jobs k on k.id = c.child_id and k.namespace = p_namespace
     left join workhorse.job_runtime r on r.job_id = k.id
    where c.parent_id = p_job_id
    order by c.name
    limit greatest(p_limit, 1))
$$;
comment on function workhorse.dashboard_job_family_v1(text, bigint, integer) is
  'The parent of one job (relation parent: the name it was spawned under) and its children (relation child, by spawn name, at most p_limit): id, type, status as readers see it (running when leased), detached. No rows for a job of another namespace or one without either. Walks job_children''s primary key and child_id index and the jobs'' primary key.';

create function workhorse.dashboard_queue_depth_v1(p_namespace text)
returns table (queue text, due bigint, scheduled bigint, oldest_due_ms bigint, failed bigint, cancelled bigint)
language sql stable as $$
  with ready as (
    -- The ready index holds queue and run_at; leased (running) rows are left out.
    select j.queue,
           count(*) filter (where j.run_at <= now()) as due,
           count(*) filter (where j.run_at > now()) as scheduled,
           (extract(epoch from now() - min(j.run_at) filter (where j.run_at <= now())) * 1000)::bigint as oldest_due_ms
      from workhorse.jobs j
     where j.namespace = p_namespace and j.status = 'ready'
       and not exists (select 1 from workhorse.job_runtime l where l.job_id = j.id)
     group by j.queue
  ), dead as (
    select j.queue,
           count(*) filter (where j.status = 'failed') as failed,
           count(*) filter (where j.status = 'cancelled') as cancelled
      from workhorse.jobs j
     where j.namespace = p_namespace and j.status in ('failed', 'cancelled')
     group by j.queue
  )
  select coalesce(r.queue, d.queue), coalesce(r.due, 0), coalesce(r.scheduled, 0), r.oldest_due_ms,
         coalesce(d.failed, 0), coalesce(d.cancelled, 0)
    from ready r full join dead d on d.queue = r.queue
   order by 1
$$;
comment on function workhorse.dashboard_queue_depth_v1(text) is
  'Per queue holding ready, failed or cancelled jobs: ready jobs due now and scheduled later, how long the oldest due job has been due (ms, database clock; null when none is due), and the failed and cancelled jobs kept. Walks the ready and dead-job partial indexes only. Running and waiting counts are list_queues_v1''s.';

create function workhorse.dashboard_throughput_v1(p_namespace text, p_minutes integer)
returns table (queue text, minute timestamptz, outcome text, attempts bigint)
language sql stable as $$
  -- Each attempt's queue is looked up by primary key, so the cost follows
  -- the attempts in the window, never the size of the jobs table. (An
  -- attempt always has its job: retention deletes them together.)
  -- A first attempt that succeeds leaves no ledger row (the job row holds
  -- it): those come from the finished-jobs index, the rest from the ledger.
  with window_start as (
    select date_trunc('minute', now()) - (greatest(p_minutes, 1) - 1) * interval '1 minute' as t
  )
  select x.queue, x.minute, x.outcome, sum(x.n)::bigint
    from (
      select (select j.queue from workhorse.jobs j where j.id = a.job_id) as queue,
             date_trunc('minute', a.finished_at) as minute, a.outcome, count(*) as n
        from workhorse.job_attempts a, window_start w
       where a.namespace = p_namespace and a.finished_at >= w.t
       group by 1, 2, 3
      union all
      select j.queue, date_trunc('minute', j.finished_at), 'succeeded', count(*)
        from workhorse.jobs j, window_start w
       where j.namespace = p_namespace and j.status in ('succeeded', 'failed', 'cancelled')
         and j.status = 'succeeded' and j.attempt = 1 and j.finished_at >= w.t
       group by 1, 2
    ) x
   group by 1, 2, 3
   order by 1, 2, 3
$$;
comment on function workhorse.dashboard_throughput_v1(text, integer) is
  'Ended attempts per queue, per minute and per outcome (every ledger outcome: succeeded, failed, retried, recovered, orphaned, cancelled, released) over the last p_minutes minutes (the current one included): the attempts ledger (its finished_at index), plus the first-attempt successes the ledger does not record, from the finished-jobs index. Only minutes with attempts have rows.';

-- The minute of the window a time falls in, 0..n-1 (times before it in 0).
create function workhorse.dashboard_minute_v1(p_start timestamptz, p_n integer, p_at timestamptz)
returns integer language sql immutable as $$
  select least(greatest(ceil(extract(epoch from p_at - p_start) / 60)::integer - 1, 0), p_n - 1)
$$;
comment on function workhorse.dashboard_minute_v1(timestamptz, integer, timestamptz) is
  'The index (0..p_n-1) of the minute ending at or after p_at in a window of p_n minutes starting at p_start; times before the window fall in minute 0, times after it in the last.';
create function workhorse.dashboard_backlog_v1(p_namespace text, p_minutes integer)
returns table (queue text, at timestamptz, outstanding bigint)
language sql stable as $$
  with bounds as (
    select date_trunc('minute', now()) - (greatest(p_minutes, 1) - 1) * interval '1 minute' as start,
           greatest(p_minutes, 1) as n
  ), rel as (
    -- Every job outstanding at some point of the window: the unfinished ones
    -- (each status through the structure that holds only its rows; a running
    -- job is a ready row with a lease, so the ready rows count it) and
    -- those that finished inside the window (the finished-jobs index).
    select j.queue, j.created_at, null::timestamptz as finished_at from workhorse.jobs j
     where j.namespace = p_namespace and j.status = 'ready'
    union all
    select j.queue, j.created_at, null from workhorse.jobs j
     where j.namespace = p_namespace and j.status = 'waiting'
    union all
    select j.queue, j.created_at, j.finished_at from workhorse.jobs j, bounds b
     where j.namespace = p_namespace and j.status in ('succeeded', 'failed', 'cancelled')
       and j.finished_at >= b.start
  ), deltas as (
    -- A job counts at the end of minute k when created by then and not yet
    -- finished: +1 from the minute it was created in, -1 from the one it finished in.
    select rel.queue, workhorse.dashboard_minute_v1(b.start, b.n, rel.created_at) as k, 1 as d from rel, bounds b
    union all
    select rel.queue, workhorse.dashboard_minute_v1(b.start, b.n, rel.finished_at), -1 from rel, bounds b
     where rel.finished_at is not null
  ), per_minute as (
    select deltas.queue, deltas.k, sum(deltas.d) as d from deltas group by 1, 2
  ), grid as (
    select q.queue, g.k from (select distinct rel.queue from rel) q, bounds b, generate_series(0, b.n - 1) g(k)
  )
  select g.queue,
         case when g.k = b.n - 1 then now() else b.start + (g.k + 1) * interval '1 minute' end,
         (sum(coalesce(p.d, 0)) over (partition by g.queue order by g.k))::bigint
    from grid g cross join bounds b
    left join per_minute p on p.queue = g.queue and p.k = g.k
   order by 1, g.k
$$;

comment on function workhorse.dashboard_backlog_v1(text, integer) is
  'The backlog of each queue over the last p_minutes minutes: at the end of every minute (the last point is now), the jobs created by then and not finished by then (ready, scheduled, running or waiting); the last point equals list_queues_v1''s ready + running + waiting. Reads the unfinished jobs through the ready and waiting indexes and the lease table, and the jobs finished inside the window through the finished-jobs index. One row per queue and minute.';

create function workhorse.dashboard_worker_ages_v1(p_namespace text)
returns table (id text, heartbeat_age_ms bigint, leases bigint)
language sql stable as $$
  select w.id, (extract(epoch from now() - w.last_seen) * 1000)::bigint, coalesce(l.n, 0)
    from workhorse.worker_registry w
    left join (select r.worker_id, count(*) as n from workhorse.job_runtime r
                where r.namespace = p_namespace group by r.worker_id) l on l.worker_id = w.id
   where w.namespace = p_namespace
   order by w.started_at, w.id
$$;
comment on function workhorse.dashboard_worker_ages_v1(text) is
  'Per registered worker of the namespace: milliseconds since its last heartbeat on the database clock, and the leases it holds in the lease table (the truth its self-reported active count approximates).';

-- Whether a slot's work runs, not only whether the slot fires: the job its
-- last cadence enqueued (its dedupe key names the cadence,
-- protocol/schedules.sql), and the oldest of its jobs that are due and not
-- running. The Alerts view says when the rules last ran from them: fired
-- sys.alerts jobs that no worker runs (the sys queue paused, its worker
-- paused) evaluate nothing.
create function workhorse.dashboard_slot_run_v1(p_namespace text, p_name text)
returns table (job_id bigint, status text, finished_at timestamptz, oldest_due_id bigint, oldest_due_at timestamptz)
language sql stable as $$
  select j.id, j.status, j.finished_at, o.id, o.run_at
    from workhorse.schedules s
    left join workhorse.jobs j
      on j.namespace = s.namespace and s.last_cadence is not null
     and j.dedupe_key = 'slot:' || s.name || ':' || to_char(s.last_cadence at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    left join lateral (
      select d.id, d.run_at from workhorse.jobs d
       where d.namespace = s.namespace and d.status = 'ready' and d.run_at <= now()
         and d.queue = coalesce(s.job->>'queue', 'default') and d.type = s.job->>'type'
         and d.dedupe_key like 'slot:' || s.name || ':%'
         and not exists (select 1 from workhorse.job_runtime r where r.job_id = d.id)
       order by d.run_at, d.id limit 1) o on true
   where s.namespace = p_namespace and s.name = p_name
$$;
comment on function workhorse.dashboard_slot_run_v1(text, text) is
  'For the slot p_name: the job its last cadence enqueued (dedupe key slot:<name>:<cadence>; its id, status and finished_at, null when the slot never fired or retention removed it), and the oldest of its jobs due and not running (id and run_at, null when none waits). No row when the slot does not exist.';

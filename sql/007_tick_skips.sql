-- 007_tick_skips: what a tick does with a job it cannot finish, and how it
-- says so.
--
-- A tick claims a job only if it fits the time left (p_max_timeout_ms). A
-- job with a timeoutMs fits when the timeout does. A job without one used to
-- fit always: a job longer than the tick was claimed by every tick, cut off
-- by the tick's deadline and retried, burning an attempt (and a tick's work)
-- each time. Now a tick's cut-off is remembered in the attempts ledger
-- (outcome retried, error code tick_deadline, with how long it ran), and a
-- tick claims such a job again only if it has more time left than the
-- longest run a tick cut off: never again in ticks of the same size, still
-- in a longer tick, and always by long-lived workers (no limit). A short
-- job that was merely claimed late in a tick is claimed again at once.
--
-- tick_skips_v1 counts the due jobs a tick leaves for these reasons, per
-- type; tick_start_v2 is tick_start_v1 plus those counts, so a tick still
-- makes one round trip at its start.

-- The longest run of `p_job_id` that a tick's deadline cut off, in ms (null: never).
create function workhorse.tick_cutoff_ms_v1(p_job_id bigint)
returns integer language sql stable as $$
  select max(date_part('epoch', a.finished_at - coalesce(a.started_at, a.finished_at)) * 1000)::integer
    from workhorse.job_attempts a
   where a.job_id = p_job_id and a.error->>'code' = 'tick_deadline'
$$;

-- Whether a claimer with p_max_timeout_ms left may take a job (null: no
-- limit, a long-lived worker). The ledger is read only for an untimed job
-- whose last error is a tick's cut-off, so the hot path reads no extra rows.
create function workhorse.fits_tick_v1(
  p_max_timeout_ms integer, p_timeout_ms integer, p_last_error jsonb, p_job_id bigint)
returns boolean language sql stable as $$
  select case
    when p_max_timeout_ms is null then true
    when p_timeout_ms is not null then p_timeout_ms <= p_max_timeout_ms
    when p_last_error is null or p_last_error->>'code' is distinct from 'tick_deadline' then true
    else p_max_timeout_ms > coalesce(workhorse.tick_cutoff_ms_v1(p_job_id), 0)
  end
$$;

-- claim_many_v1 keeps its body (as the latest migration that defined it
-- left it) and only its timeout rule changes, from "an untimed job always
-- fits" to fits_tick_v1. The rule is swapped in the function's own
-- definition, so this file does not restate (and cannot undo) changes other
-- migrations make to the claim; it fails if the rule is not found.
do $$
declare
  v_old constant text := '(p_max_timeout_ms is null or j.timeout_ms is null or j.timeout_ms <= p_max_timeout_ms)';
  v_new constant text := 'workhorse.fits_tick_v1(p_max_timeout_ms, j.timeout_ms, j.last_error, j.id)';
  v_fn regprocedure;
  v_def text;
  v_found integer := 0;
begin
  for v_fn in
    select p.oid::regprocedure from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where n.nspname = 'workhorse' and p.proname = 'claim_many_v1'
  loop
    v_def := pg_get_functiondef(v_fn);
    if position(v_old in v_def) = 0 then
      raise exception '007_tick_skips: % has no timeout rule "%" to replace', v_fn, v_old;
    end if;
    execute replace(v_def, v_old, v_new);
    v_found := v_found + 1;
  end loop;
  if v_found = 0 then raise exception '007_tick_skips: workhorse.claim_many_v1 not found'; end if;
end $$;

-- count_ready_v1 (the fan-out backlog) with the same rule.
create or replace function workhorse.count_ready_v1(
  p_namespace text, p_queues text[], p_types text[], p_max_timeout_ms integer, p_cap integer)
returns integer language sql stable as $$
  select count(*)::integer from (
    select 1 from workhorse.jobs j
     where j.namespace = p_namespace and j.queue = any(p_queues) and j.status = 'ready'
       and j.run_at <= now() and j.type = any(p_types)
       and workhorse.fits_tick_v1(p_max_timeout_ms, j.timeout_ms, j.last_error, j.id)
     limit p_cap) c
$$;

-- The due ready jobs of these queues and types that a tick with
-- p_window_ms to claim in leaves because they cannot finish in it, per type:
-- too_long (timeout_ms above the window), cut_off (no timeout_ms, and a
-- tick's deadline already cut off a run at least as long as the window),
-- longest_ms (the largest such timeout or cut-off run). At most p_scan due
-- jobs are examined, in no particular order, so the cost is bounded however
-- long the queue is.
create function workhorse.tick_skips_v1(
  p_namespace text, p_queues text[], p_types text[], p_window_ms integer, p_scan integer)
returns table (type text, too_long integer, cut_off integer, longest_ms integer)
language sql stable as $$
  with due as (
    select j.id, j.type, j.timeout_ms, j.last_error
      from workhorse.jobs j
     where j.namespace = p_namespace and j.queue = any(p_queues) and j.status = 'ready'
       and j.run_at <= now() and j.type = any(p_types)
     limit p_scan
  ), judged as (
    select d.type,
           case when d.timeout_ms > p_window_ms then d.timeout_ms end as too_long_ms,
           case when d.timeout_ms is null and d.last_error->>'code' = 'tick_deadline'
                 and not workhorse.fits_tick_v1(p_window_ms, null, d.last_error, d.id)
                then workhorse.tick_cutoff_ms_v1(d.id) end as cut_off_ms
      from due d
  )
  select x.type, count(x.too_long_ms)::integer, count(x.cut_off_ms)::integer,
         max(greatest(x.too_long_ms, x.cut_off_ms))::integer
    from judged x
   where x.too_long_ms is not null or x.cut_off_ms is not null
   group by x.type
   order by x.type
$$;

-- tick_start_v1, plus the tick's skips (tick_skips_v1 as jsonb, counted
-- after the recovery pass, against p_window_ms: the tick's claim window).
create function workhorse.tick_start_v2(
  p_namespace text, p_worker_id text, p_build text, p_queues text[], p_types text[], p_concurrency integer,
  p_heartbeat_ms integer, p_deadline timestamptz, p_recover_limit integer,
  p_schedule_namespaces text[], p_schedules jsonb, p_slot_limit integer, p_slot_lease_ms integer,
  p_expected_version integer, p_window_ms integer, p_skip_scan integer)
returns table (db_now timestamptz, recovered integer, slots jsonb, skips jsonb)
language plpgsql as $$
declare
  s record;
  v_skips jsonb;
begin
  select * into s from workhorse.tick_start_v1(p_namespace, p_worker_id, p_build, p_queues, p_types, p_concurrency,
    p_heartbeat_ms, p_deadline, p_recover_limit, p_schedule_namespaces, p_schedules, p_slot_limit, p_slot_lease_ms,
    p_expected_version);
  -- A statement of its own: it sees the jobs the recovery pass made ready.
  select coalesce(jsonb_agg(to_jsonb(k)), '[]'::jsonb) into v_skips
    from workhorse.tick_skips_v1(p_namespace, p_queues, p_types, p_window_ms, p_skip_scan) k;
  return query select s.db_now, s.recovered, s.slots, v_skips;
end $$;

comment on function workhorse.fits_tick_v1(integer, integer, jsonb, bigint) is
  'Claim rule: a job fits a claimer with p_max_timeout_ms left (null = no limit) if its timeout_ms fits, or, without one, unless a tick already cut off a run at least that long.';
comment on function workhorse.tick_skips_v1(text, text[], text[], integer, integer) is
  'Per type: due ready jobs a tick with p_window_ms leaves (too_long: timeout_ms > window; cut_off: untimed, cut off by a tick after running >= window), among at most p_scan due jobs.';
comment on function workhorse.tick_start_v2(text, text, text, text[], text[], integer, integer, timestamptz, integer, text[], jsonb, integer, integer, integer, integer, integer) is
  'tick_start_v1 plus skips: tick_skips_v1 rows as a jsonb array, counted after the recovery pass.';

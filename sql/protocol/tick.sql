-- tick: the serverless tick's merged start call, the backlog count its
-- fan-out decision and backlog metric read, and the count of what it skips
-- (the jobs that cannot finish in its time, per type, so a tick that claims
-- nothing says why).

-- Its commit does not wait for the WAL flush (synchronous_commit off for
-- this transaction only, so nothing outlives it behind a pooler): everything
-- it writes is re-derived if a server crash loses it. A lost registration is
-- redone by the next heartbeat, a lost recovery by the next pass, a lost
-- slot lease or schedule sync by the next tick. Firing a slot (the jobs it
-- enqueues) is a separate, normally committed statement.
create function workhorse.tick_start_v2(
  p_namespace text, p_worker_id text, p_build text, p_queues text[], p_types text[], p_concurrency integer,
  p_heartbeat_ms integer, p_deadline timestamptz, p_recover_limit integer,
  p_schedule_namespaces text[], p_schedules jsonb, p_slot_limit integer, p_slot_lease_ms integer,
  p_expected_version integer, p_window_ms integer, p_skip_scan integer)
returns table (db_now timestamptz, recovered integer, slots jsonb, skips jsonb)
language plpgsql as $$
declare
  v_version integer;
  v_recovered integer;
  v_slots jsonb;
  v_skips jsonb;
begin
  v_version := workhorse.schema_version_v1();
  if v_version is distinct from p_expected_version then
    raise exception 'workhorse schema version % is not the expected %', v_version, p_expected_version
      using errcode = 'WH426', detail = coalesce(v_version::text, '');
  end if;
  perform set_config('synchronous_commit', 'off', true);
  perform workhorse.register_worker_v1(p_namespace, p_worker_id, p_build, 'tick', p_queues, p_types,
                                       p_concurrency, p_heartbeat_ms, p_deadline);
  if jsonb_array_length(coalesce(p_schedules, '[]'::jsonb)) > 0 then
    perform workhorse.upsert_schedules_v1(p_namespace, p_schedules);
  end if;
  v_recovered := case when p_recover_limit > 0 then workhorse.recover_expired_v1(p_namespace, p_recover_limit) else 0 end;
  v_slots := case when cardinality(p_schedule_namespaces) > 0 and p_slot_limit > 0 then
      (select coalesce(jsonb_agg(jsonb_build_object(
                 'name', c.name, 'cron', c.cron, 'timezone', c.timezone,
                 'interval_ms', c.interval_ms, 'next_run_at', c.next_run_at)), '[]'::jsonb)
         from workhorse.claim_slots_v2(p_namespace, p_worker_id, p_schedule_namespaces,
                                       -- the tick declares the slots it stores
                                       array(select x->>'name' from jsonb_array_elements(coalesce(p_schedules, '[]'::jsonb)) x),
                                       p_slot_limit, p_slot_lease_ms) c)
    else '[]'::jsonb end;
  -- A statement of its own: it sees the jobs the recovery pass made ready.
  select coalesce(jsonb_agg(to_jsonb(k)), '[]'::jsonb) into v_skips
    from workhorse.tick_skips_v1(p_namespace, p_queues, p_types, p_window_ms, p_skip_scan) k;
  return query select now(), v_recovered, v_slots, v_skips;
end $$;
comment on function workhorse.tick_start_v2(text, text, text, text[], text[], integer, integer, timestamptz, integer, text[], jsonb, integer, integer, integer, integer, integer) is
  'A tick''s start in one round trip: raises WH426 (detail = the version found) unless schema_version_v1() = p_expected_version; registers the tick worker (kind tick, deadline p_deadline); upserts p_schedules (as upsert_schedules_v1; no write when unchanged); runs a recovery pass of p_recover_limit; leases up to p_slot_limit due slots of p_schedule_namespaces for p_slot_lease_ms (claim_slots_v2: of the declared slots, only those p_schedules names); counts what a tick with p_window_ms to claim in will skip (tick_skips_v1 over at most p_skip_scan due jobs). Returns (db_now, recovered, slots: a JSON array of claim_slots_v2 rows, skips: a JSON array of tick_skips_v1 rows). Commits without waiting for the WAL flush: everything it writes is re-derived if a crash loses it.';

-- Of p_queues, those not paused: a paused queue's jobs are claimed by no
-- one, so they are not jobs a tick "skips for its time" (a hint to raise
-- the budget would send an operator the wrong way). They still count in
-- the ready backlog (count_ready_v1), which an operator watches grow.
create function workhorse.unpaused_queues_v1(p_namespace text, p_queues text[])
returns text[] language sql stable as $$
  select coalesce(array_agg(n), '{}') from unnest(p_queues) n
   where not exists (select 1 from workhorse.queues q where q.namespace = p_namespace and q.name = n and q.paused)
$$;
comment on function workhorse.unpaused_queues_v1(text, text[]) is
  'The queues of p_queues that are not paused (a queue without a row is not paused).';

create function workhorse.count_ready_v1(
  p_namespace text, p_queues text[], p_types text[], p_max_timeout_ms integer, p_cap integer)
returns integer language sql stable as $$
  select count(*)::integer from (
    select 1 from workhorse.jobs j
     where j.namespace = p_namespace and j.queue = any(p_queues) and j.status = 'ready'
       and j.run_at <= now() and j.type = any(p_types)
       and not exists (select 1 from workhorse.job_runtime r where r.job_id = j.id)
       and workhorse.fits_tick_v1(p_max_timeout_ms, j.timeout_ms, j.last_error, j.id)
     limit p_cap) c
$$;
comment on function workhorse.count_ready_v1(text, text[], text[], integer, integer) is
  'How many due ready jobs of p_types in p_queues (that fit p_max_timeout_ms by fits_tick_v1 when it is set) a worker could claim, counted up to p_cap: callers need "more than N", never an exact total.';

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
     where j.namespace = p_namespace and j.queue = any(workhorse.unpaused_queues_v1(p_namespace, p_queues)) and j.status = 'ready'
       and j.run_at <= now() and j.type = any(p_types)
       and not exists (select 1 from workhorse.job_runtime r where r.job_id = j.id)
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
comment on function workhorse.tick_skips_v1(text, text[], text[], integer, integer) is
  'Per type: due ready jobs of the unpaused queues of p_queues that a tick with p_window_ms leaves (too_long: timeout_ms > window; cut_off: untimed, cut off by a tick after running >= window), among at most p_scan due jobs.';

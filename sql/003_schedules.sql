-- 003_schedules: recurring slots, the tick's merged start call, retention.
--
-- A schedule fires once per cadence, whichever worker claims it. Cron math
-- lives in the application (croner), so firing takes two short statements:
-- claim_slots_v1 leases the due rows (FOR UPDATE SKIP LOCKED plus a short
-- claim lease so a second claimer skips them), the claimer computes the due
-- cadences, and fire_slots_v1 enqueues one job per cadence with the dedupe
-- key `slot:<name>:<cadence ISO time>` and advances next_run_at, fenced by
-- the next_run_at it claimed. The dedupe key makes a cadence fire once even
-- if two claimers race; the fence keeps a late claimer from firing an older
-- catch-up window after another one moved the slot on.
--
-- next_run_at is always stored at millisecond precision so the value a
-- claimer reads back (a JavaScript Date) compares equal in the fence.

create table workhorse.schedules (
  namespace           text        not null,
  name                text        not null,
  -- The group a worker opts into with `scheduleNamespaces`; sys.* slots are in `sys`.
  schedule_namespace  text        not null default 'default',
  cron                text,
  timezone            text,
  interval_ms         bigint      check (interval_ms is null or interval_ms > 0),
  -- The job each cadence enqueues, as enqueue_many_v1 takes it (type, queue, payload, ...).
  job                 jsonb       not null,
  enabled             boolean     not null default true,
  next_run_at         timestamptz not null,
  last_fired_at       timestamptz,
  last_cadence        timestamptz,
  claimed_by          text,
  claimed_until       timestamptz,
  created_at          timestamptz not null default now(),
  updated_at          timestamptz not null default now(),
  primary key (namespace, name),
  check ((cron is null) <> (interval_ms is null))
);
create index schedules_due_idx on workhorse.schedules (namespace, next_run_at) where enabled;

-- Creates or changes schedules from a JSON array of rows
-- ({name, schedule_namespace, cron, timezone, interval_ms, job, enabled?, first_run_at?}).
-- An unchanged row is not written. A changed cadence restarts at first_run_at
-- (or now + interval); `enabled` is applied only when the key is present, so
-- a declarative sync never re-enables a slot an operator disabled.
create function workhorse.upsert_schedules_v1(p_namespace text, p_rows jsonb)
returns integer language plpgsql as $$
declare
  v_changed integer;
begin
  with input as (
    select x->>'name' as name,
           coalesce(x->>'schedule_namespace', 'default') as schedule_namespace,
           x->>'cron' as cron,
           x->>'timezone' as timezone,
           (x->>'interval_ms')::bigint as interval_ms,
           x->'job' as job,
           (x->>'enabled')::boolean as enabled,
           coalesce((x->>'first_run_at')::timestamptz,
                    date_trunc('milliseconds', now()) + (x->>'interval_ms')::bigint * interval '1 millisecond') as first_run_at
      from jsonb_array_elements(p_rows) x
  ), up as (
    insert into workhorse.schedules as s
      (namespace, name, schedule_namespace, cron, timezone, interval_ms, job, enabled, next_run_at)
    select p_namespace, i.name, i.schedule_namespace, i.cron, i.timezone, i.interval_ms, i.job,
           coalesce(i.enabled, true), date_trunc('milliseconds', i.first_run_at)
      from input i
     -- Unchanged rows are skipped here, so they are not even locked.
     where not exists (
       select 1 from workhorse.schedules cur
        where cur.namespace = p_namespace and cur.name = i.name
          and (cur.schedule_namespace, cur.cron, cur.timezone, cur.interval_ms, cur.job)
              is not distinct from (i.schedule_namespace, i.cron, i.timezone, i.interval_ms, i.job))
    on conflict (namespace, name) do update set
      schedule_namespace = excluded.schedule_namespace,
      job = excluded.job,
      cron = excluded.cron,
      timezone = excluded.timezone,
      interval_ms = excluded.interval_ms,
      next_run_at = case
        when (s.cron, s.timezone, s.interval_ms) is distinct from (excluded.cron, excluded.timezone, excluded.interval_ms)
        then excluded.next_run_at else s.next_run_at end,
      claimed_by = null, claimed_until = null,
      updated_at = now()
    where (s.schedule_namespace, s.cron, s.timezone, s.interval_ms, s.job)
          is distinct from (excluded.schedule_namespace, excluded.cron, excluded.timezone, excluded.interval_ms, excluded.job)
    returning s.name
  )
  select count(*) into v_changed from up;

  -- Explicit enable/disable flags given with the rows.
  update workhorse.schedules s set enabled = i.enabled, updated_at = now()
    from (select x->>'name' as name, (x->>'enabled')::boolean as enabled
            from jsonb_array_elements(p_rows) x where x ? 'enabled') i
   where s.namespace = p_namespace and s.name = i.name and s.enabled is distinct from i.enabled;
  return v_changed;
end $$;

-- Leases up to p_limit due slots of the given schedule namespaces for
-- p_lease_ms. Rows another claimer holds (row lock or live lease) are skipped.
create function workhorse.claim_slots_v1(
  p_namespace text, p_worker_id text, p_schedule_namespaces text[], p_limit integer, p_lease_ms integer)
returns table (name text, cron text, timezone text, interval_ms bigint, next_run_at timestamptz, db_now timestamptz)
language sql as $$
  with due as (
    select s.name from workhorse.schedules s
     where s.namespace = p_namespace and s.enabled and s.next_run_at <= now()
       and s.schedule_namespace = any(p_schedule_namespaces)
       and (s.claimed_until is null or s.claimed_until < now())
     order by s.next_run_at
     limit p_limit
     for update skip locked
  )
  update workhorse.schedules s
     set claimed_by = p_worker_id, claimed_until = now() + p_lease_ms * interval '1 millisecond'
    from due
   where s.namespace = p_namespace and s.name = due.name
  returning s.name, s.cron, s.timezone, s.interval_ms, s.next_run_at, now()
$$;

-- Fires claimed slots: p_fires is a JSON array of
-- {name, expected, next_run_at, cadences: [ISO text, ...]}. A slot whose
-- next_run_at is no longer `expected` was moved on by another claimer and is
-- skipped. Each cadence enqueues the slot's job with the dedupe key
-- `slot:<name>:<cadence>`; one row per cadence comes back, `created` false
-- when that cadence had already fired.
create function workhorse.fire_slots_v1(p_namespace text, p_fires jsonb)
returns table (name text, cadence text, job_id bigint, created boolean)
language plpgsql as $$
declare
  v_names text[];
  v_cadences text[];
  v_jobs jsonb;
begin
  with f as (
    select x->>'name' as name, (x->>'expected')::timestamptz as expected,
           (x->>'next_run_at')::timestamptz as next_run_at, coalesce(x->'cadences', '[]'::jsonb) as cadences
      from jsonb_array_elements(p_fires) x
  ), adv as (
    update workhorse.schedules s
       set next_run_at = date_trunc('milliseconds', f.next_run_at),
           last_fired_at = case when jsonb_array_length(f.cadences) > 0 then now() else s.last_fired_at end,
           last_cadence = coalesce((select max(c::timestamptz) from jsonb_array_elements_text(f.cadences) c), s.last_cadence),
           claimed_by = null, claimed_until = null, updated_at = now()
      from f
     where s.namespace = p_namespace and s.name = f.name and s.next_run_at = f.expected
    returning s.name, s.job, f.cadences
  ), fired as (
    select adv.name, c.value as cadence, c.ordinality as ord,
           adv.job || jsonb_build_object('dedupe_key', 'slot:' || adv.name || ':' || c.value) as job
      from adv cross join lateral jsonb_array_elements_text(adv.cadences) with ordinality c
  )
  select array_agg(fired.name order by fired.name, fired.ord), array_agg(fired.cadence order by fired.name, fired.ord),
         coalesce(jsonb_agg(fired.job order by fired.name, fired.ord), '[]'::jsonb)
    into v_names, v_cadences, v_jobs
    from fired;

  if jsonb_array_length(v_jobs) = 0 then return; end if;
  return query
  select v_names[e.ord], v_cadences[e.ord], e.id, e.created
    from workhorse.enqueue_many_v1(p_namespace, v_jobs) e
   order by e.ord;
end $$;

create function workhorse.list_schedules_v1(p_namespace text)
returns setof workhorse.schedules language sql stable as $$
  select * from workhorse.schedules where namespace = p_namespace order by name
$$;

create function workhorse.get_schedule_v1(p_namespace text, p_name text)
returns setof workhorse.schedules language sql stable as $$
  select * from workhorse.schedules where namespace = p_namespace and name = p_name
$$;

-- Enables or disables a slot. Enabling a disabled slot restarts it at
-- p_next_run_at when given, so a long pause does not fire a backlog.
-- Returns false when no such schedule exists.
create function workhorse.set_schedule_enabled_v1(
  p_namespace text, p_name text, p_enabled boolean, p_next_run_at timestamptz default null)
returns boolean language plpgsql as $$
begin
  update workhorse.schedules s
     set next_run_at = case when p_enabled and not s.enabled and p_next_run_at is not null
                            then date_trunc('milliseconds', p_next_run_at) else s.next_run_at end,
         enabled = p_enabled, claimed_by = null, claimed_until = null, updated_at = now()
   where s.namespace = p_namespace and s.name = p_name;
  return found;
end $$;

create function workhorse.delete_schedule_v1(p_namespace text, p_name text)
returns boolean language plpgsql as $$
begin
  delete from workhorse.schedules s where s.namespace = p_namespace and s.name = p_name;
  return found;
end $$;

-- The tick's start in one round trip: checks the schema version, registers
-- the tick worker, syncs the app's schedules (no write when unchanged), runs
-- a bounded recovery pass and leases the due slots. Raises WH426 (detail =
-- the version found) when the schema is not the one the caller expects.
--
-- Its commit does not wait for the WAL flush (synchronous_commit off for
-- this transaction only, so nothing outlives it behind a pooler): everything
-- it writes is re-derived if a server crash loses it. A lost registration is
-- redone by the next heartbeat, a lost recovery by the next pass, a lost
-- slot lease or schedule sync by the next tick. Firing a slot (the jobs it
-- enqueues) is a separate, normally committed statement.
create function workhorse.tick_start_v1(
  p_namespace text, p_worker_id text, p_build text, p_queues text[], p_types text[], p_concurrency integer,
  p_heartbeat_ms integer, p_deadline timestamptz, p_recover_limit integer,
  p_schedule_namespaces text[], p_schedules jsonb, p_slot_limit integer, p_slot_lease_ms integer,
  p_expected_version integer)
returns table (db_now timestamptz, recovered integer, slots jsonb)
language plpgsql as $$
declare
  v_version integer;
begin
  select max(m.version) into v_version from workhorse.migrations m;
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
  return query
  select now(),
         case when p_recover_limit > 0 then workhorse.recover_expired_v1(p_namespace, p_recover_limit) else 0 end,
         case when cardinality(p_schedule_namespaces) > 0 and p_slot_limit > 0 then
           (select coalesce(jsonb_agg(jsonb_build_object(
                      'name', c.name, 'cron', c.cron, 'timezone', c.timezone,
                      'interval_ms', c.interval_ms, 'next_run_at', c.next_run_at)), '[]'::jsonb)
              from workhorse.claim_slots_v1(p_namespace, p_worker_id, p_schedule_namespaces,
                                            p_slot_limit, p_slot_lease_ms) c)
         else '[]'::jsonb end;
end $$;

-- How many due ready jobs this worker could claim, counted up to p_cap
-- (the fan-out decision needs "more than N", never an exact total).
create function workhorse.count_ready_v1(
  p_namespace text, p_queues text[], p_types text[], p_max_timeout_ms integer, p_cap integer)
returns integer language sql stable as $$
  select count(*)::integer from (
    select 1 from workhorse.jobs j
     where j.namespace = p_namespace and j.queue = any(p_queues) and j.status = 'ready'
       and j.run_at <= now() and j.type = any(p_types)
       and (p_max_timeout_ms is null or j.timeout_ms is null or j.timeout_ms <= p_max_timeout_ms)
     limit p_cap) c
$$;

-- One bounded retention batch: deletes up to p_limit terminal jobs that
-- finished more than p_older_than_ms ago, with their attempts and steps
-- ledgers, and the registry rows of workers dead or silent for 7
-- heartbeats. Ready, running and waiting jobs are never touched.
create function workhorse.retention_v1(p_namespace text, p_older_than_ms bigint, p_limit integer)
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
   where w.namespace = p_namespace
     and (w.state = 'dead' or w.last_seen < now() - 7 * w.heartbeat_ms * interval '1 millisecond');
  get diagnostics v_workers = row_count;
  return query select v_jobs, v_workers;
end $$;

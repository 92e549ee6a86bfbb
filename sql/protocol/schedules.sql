-- schedules: recurring slots. A schedule fires once per cadence, whichever
-- worker claims it. Cron math lives in the client (it computes the due
-- cadences against the database clock claim_slots_v1 returns), so firing
-- takes two short statements: claim_slots_v1 leases the due rows (FOR
-- UPDATE SKIP LOCKED plus a short claim lease so a second claimer skips
-- them), and fire_slots_v1 enqueues one job per cadence with the dedupe key
-- `slot:<name>:<cadence ISO time>` and advances next_run_at, fenced by the
-- next_run_at it claimed. The dedupe key makes a cadence fire once even if
-- two claimers race; the fence keeps a late claimer from firing an older
-- catch-up window after another one moved the slot on.

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
           coalesce((x->>'declared')::boolean, false) as declared,
           coalesce((x->>'first_run_at')::timestamptz,
                    date_trunc('milliseconds', now()) + (x->>'interval_ms')::bigint * interval '1 millisecond') as first_run_at
      from jsonb_array_elements(p_rows) x
  ), up as (
    insert into workhorse.schedules as s
      (namespace, name, schedule_namespace, cron, timezone, interval_ms, job, enabled, declared, next_run_at)
    select p_namespace, i.name, i.schedule_namespace, i.cron, i.timezone, i.interval_ms, i.job,
           coalesce(i.enabled, true), i.declared, date_trunc('milliseconds', i.first_run_at)
      from input i
     -- Unchanged rows are skipped here, so they are not even locked.
     where not exists (
       select 1 from workhorse.schedules cur
        where cur.namespace = p_namespace and cur.name = i.name
          and (cur.schedule_namespace, cur.cron, cur.timezone, cur.interval_ms, cur.job, cur.declared)
              is not distinct from (i.schedule_namespace, i.cron, i.timezone, i.interval_ms, i.job, i.declared))
    on conflict (namespace, name) do update set
      declared = excluded.declared,
      schedule_namespace = excluded.schedule_namespace,
      job = excluded.job,
      cron = excluded.cron,
      timezone = excluded.timezone,
      interval_ms = excluded.interval_ms,
      next_run_at = case
        when (s.cron, s.timezone, s.interval_ms) is distinct from (excluded.cron, excluded.timezone, excluded.interval_ms)
        then excluded.next_run_at else s.next_run_at end,
      claimed_by = case when s.job is distinct from excluded.job or (s.cron, s.timezone, s.interval_ms, s.schedule_namespace)
                             is distinct from (excluded.cron, excluded.timezone, excluded.interval_ms, excluded.schedule_namespace)
                        then null else s.claimed_by end,
      claimed_until = case when s.job is distinct from excluded.job or (s.cron, s.timezone, s.interval_ms, s.schedule_namespace)
                             is distinct from (excluded.cron, excluded.timezone, excluded.interval_ms, excluded.schedule_namespace)
                           then null else s.claimed_until end,
      updated_at = now()
    where (s.schedule_namespace, s.cron, s.timezone, s.interval_ms, s.job)
          is distinct from (excluded.schedule_namespace, excluded.cron, excluded.timezone, excluded.interval_ms, excluded.job)
       or s.declared <> excluded.declared
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
comment on function workhorse.upsert_schedules_v1(text, jsonb) is
  'Creates or changes schedules from a JSON array of {name, schedule_namespace, cron | interval_ms, timezone, job (an enqueue_many_v1 job object without dedupe_key), enabled?, first_run_at?, declared?}. declared (default false) marks a slot an app declares (see claim_slots_v2): the last writer decides. An unchanged row is not written (not even locked). A changed cadence restarts at first_run_at (or now + interval_ms). enabled is applied only when the key is present, so a declarative sync never re-enables a slot an operator disabled. Returns how many rows were inserted or changed.';

create function workhorse.claim_slots_v2(
  p_namespace text, p_worker_id text, p_schedule_namespaces text[], p_declared text[], p_limit integer, p_lease_ms integer)
returns table (name text, cron text, timezone text, interval_ms bigint, next_run_at timestamptz, db_now timestamptz)
language sql as $$
  with due as (
    select s.name from workhorse.schedules s
     where s.namespace = p_namespace and s.enabled and s.next_run_at <= now()
       and s.schedule_namespace = any(p_schedule_namespaces)
       -- A declared slot fires only from a firer that still declares it (null: any firer).
       and (not s.declared or p_declared is null or s.name = any(p_declared))
       -- Its own live claim does not hold the claimer back: a claim whose
       -- answer it lost (or whose firing failed) is taken again at once
       -- instead of locking the slot until the claim lease runs out
       -- (fire_slots_v1's per-cadence keys keep a repeat from firing twice).
       and (s.claimed_until is null or s.claimed_until < now() or s.claimed_by = p_worker_id)
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
comment on function workhorse.claim_slots_v2(text, text, text[], text[], integer, integer) is
  'Leases up to p_limit due, enabled slots of the given schedule namespaces to p_worker_id for p_lease_ms, skipping rows another claimer holds (row lock or live claim lease; the caller''s own live claim lease does not hold it back) and declared slots whose name is not in p_declared (the slots the caller''s build declares; null: no such filter). Returns (name, cron, timezone, interval_ms, next_run_at, db_now): the client computes the due cadences from next_run_at to db_now and calls fire_slots_v1.';

-- The first form: every due slot, declared or not.
create function workhorse.claim_slots_v1(
  p_namespace text, p_worker_id text, p_schedule_namespaces text[], p_limit integer, p_lease_ms integer)
returns table (name text, cron text, timezone text, interval_ms bigint, next_run_at timestamptz, db_now timestamptz)
language sql as $$
  select * from workhorse.claim_slots_v2(p_namespace, p_worker_id, p_schedule_namespaces, null, p_limit, p_lease_ms)
$$;
comment on function workhorse.claim_slots_v1(text, text, text[], integer, integer) is
  'claim_slots_v2 without the declared filter: leases due slots of the schedule namespaces whether or not the caller declares them.';

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
  ), held as (
    -- A built-in slot (sys.*) whose earlier job has not finished (not
    -- started yet: the sys queue paused, or no worker running it; or still
    -- running: a delivery held by a sink that does not answer) enqueues no
    -- other: that job does the same work, a pause of a day queued 1,440 of
    -- each, all run back to back on resume, and a second sys.outbox job
    -- beside a held one took the system worker's other slot from the
    -- alerts. The slot still moves on; its last firing does not.
    select f.name, f.expected, f.next_run_at,
           case when f.name like 'sys.%' and exists (
                  select 1 from workhorse.schedules s0 join workhorse.jobs j
                    on j.namespace = s0.namespace and j.queue = coalesce(s0.job->>'queue', 'default')
                   and j.type = s0.job->>'type' and j.status = 'ready'
                   where s0.namespace = p_namespace and s0.name = f.name)
                then '[]'::jsonb else f.cadences end as cadences
      from f
  ), adv as (
    update workhorse.schedules s
       set next_run_at = date_trunc('milliseconds', h.next_run_at),
           last_fired_at = case when jsonb_array_length(h.cadences) > 0 then now() else s.last_fired_at end,
           last_cadence = coalesce((select max(c::timestamptz) from jsonb_array_elements_text(h.cadences) c), s.last_cadence),
           claimed_by = null, claimed_until = null, updated_at = now()
      from held h
     -- enabled is re-checked on the row this statement locks: a disable that
     -- committed after the claim (or while this statement waited on its row
     -- lock) wins, and the slot does not fire.
     where s.namespace = p_namespace and s.name = h.name and s.next_run_at = h.expected and s.enabled
    returning s.name, s.job, h.cadences
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
comment on function workhorse.fire_slots_v1(text, jsonb) is
  'Fires claimed slots: p_fires is a JSON array of {name, expected (the next_run_at the claim returned: the fence), next_run_at (the new one), cadences: [ISO text, ...]}. A slot whose next_run_at is no longer expected was moved on by another claimer and is skipped; so is a slot disabled since its claim (enabled is checked on the locked row, so a disable committing while this call waits for the row wins). Each cadence enqueues the slot''s job with dedupe key slot:<name>:<cadence>, except that a built-in slot (sys.*) with a job of its type not finished (ready, started or not) enqueues none (the slot still moves on; its last_fired_at and last_cadence do not). Returns one row per cadence: (name, cadence, job_id, created = false when that cadence had already fired).';

create function workhorse.list_schedules_v1(p_namespace text)
returns setof workhorse.schedules language sql stable as $$
  select * from workhorse.schedules where namespace = p_namespace order by name
$$;
comment on function workhorse.list_schedules_v1(text) is
  'The schedules of the namespace, by name.';

create function workhorse.get_schedule_v1(p_namespace text, p_name text)
returns setof workhorse.schedules language sql stable as $$
  select * from workhorse.schedules where namespace = p_namespace and name = p_name
$$;
comment on function workhorse.get_schedule_v1(text, text) is
  'The schedule row of (namespace, name), or no row when there is none.';

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
comment on function workhorse.set_schedule_enabled_v1(text, text, boolean, timestamptz) is
  'Enables or disables a slot and drops its claim lease. Enabling a disabled slot restarts it at p_next_run_at when given, so a long pause fires no backlog. Returns false when no such schedule exists.';

create function workhorse.delete_schedule_v1(p_namespace text, p_name text)
returns boolean language plpgsql as $$
begin
  delete from workhorse.schedules s where s.namespace = p_namespace and s.name = p_name;
  return found;
end $$;
comment on function workhorse.delete_schedule_v1(text, text) is
  'Deletes a slot (jobs it already enqueued stay). Returns false when no such schedule exists.';

-- wake: how an idle worker learns that work is coming without polling for
-- it. Wake hints are NOTIFYs on one channel per (namespace, queue), so
-- activity on one queue wakes only the workers of that queue. The payload
-- is the number of milliseconds, by the database clock, until the earliest
-- job the hint is about comes due ('0': due now). Hints carry no truth: a
-- worker still claims (and still polls); a lost hint costs at most a poll.
--
-- Channel names: PostgreSQL truncates identifiers, channel names included,
-- at 63 bytes, so a long namespace and queue would collide after
-- truncation. The channel is `workhorse:<namespace>:<queue>` when that fits
-- in 63 bytes, and otherwise `workhorse#` followed by the hex md5 of
-- `<namespace>:<queue>` (42 bytes). A namespace holds no ':' and no '#', so
-- the two forms never meet. A client in any language computes the same name
-- (or calls wake_channel_v1) and LISTENs on it.

create function workhorse.wake_channel_v1(p_namespace text, p_queue text)
returns text language sql immutable parallel safe as $$
  select case when octet_length('workhorse:' || p_namespace || ':' || p_queue) <= 63
              then 'workhorse:' || p_namespace || ':' || p_queue
              else 'workhorse#' || md5(p_namespace || ':' || p_queue) end
$$;
comment on function workhorse.wake_channel_v1(text, text) is
  'The NOTIFY channel of a queue''s wake hints: workhorse:<namespace>:<queue> when that is at most 63 bytes, else workhorse# plus the hex md5 of <namespace>:<queue>. Listen on it to be woken when the queue gets work.';

-- The longest a worker ever waits between two looks at the database (the
-- largest pollMs), in ms: a job due later than this is found by a later
-- look, so no hint is sent for it.
create function workhorse.wake_horizon_ms_v1()
returns integer language sql immutable parallel safe as $$ select 600000 $$;
comment on function workhorse.wake_horizon_ms_v1() is
  'The longest wait, in ms, of any worker between two looks at the database (600000): hints are sent only for jobs due within it.';

create function workhorse.notify_wake_v1(p_namespace text, p_queue text, p_due_in_ms bigint default 0)
returns void language sql as $$
  select pg_notify(workhorse.wake_channel_v1(p_namespace, p_queue), greatest(coalesce(p_due_in_ms, 0), 0)::text)
   where coalesce(p_due_in_ms, 0) <= workhorse.wake_horizon_ms_v1()
$$;
comment on function workhorse.notify_wake_v1(text, text, bigint) is
  'Sends one wake hint for the queue: payload = p_due_in_ms (ms until its earliest new job comes due, 0 = now). Sends nothing for a job due beyond wake_horizon_ms_v1(). Delivered at commit; call it once per queue per statement, never per row (NOTIFY serialises commits).';

-- When the next delayed job of a worker's queues comes due: the worker
-- reads it after a look finds nothing more to claim, and sleeps until then
-- (or its safety poll, whichever is sooner). The ready index is ordered by
-- priority first, so the read walks the distinct priorities of each queue
-- (a skip scan: one index probe per priority) rather than every ready row.
create function workhorse.next_due_v1(
  p_namespace text, p_queues text[], p_types text[], p_within_ms integer)
returns integer language plpgsql stable
set jit = off
as $$
declare
  v_queue text;
  v_prio integer;
  v_at timestamptz;
  v_best timestamptz;
  v_until timestamptz := now() + greatest(p_within_ms, 0) * interval '1 millisecond';
  v_probes integer := 0;
begin
  if cardinality(p_types) = 0 or p_within_ms is null or p_within_ms <= 0 then return null; end if;
  foreach v_queue in array p_queues loop
    continue when exists (select 1 from workhorse.queues q
                           where q.namespace = p_namespace and q.name = v_queue and q.paused);
    select j.priority into v_prio from workhorse.jobs j
     where j.namespace = p_namespace and j.queue = v_queue and j.status = 'ready'
     order by j.priority limit 1;
    while v_prio is not null loop
      v_probes := v_probes + 1;
      -- Past this many priorities, stop looking: the horizon is a safe answer.
      if v_probes > 64 then return p_within_ms; end if;
      select j.run_at into v_at from workhorse.jobs j
       where j.namespace = p_namespace and j.queue = v_queue and j.status = 'ready' and j.priority = v_prio
         and j.run_at > now() and j.run_at <= coalesce(v_best, v_until) and j.type = any(p_types)
       order by j.run_at limit 1;
      if v_at is not null then v_best := v_at; end if;
      select j.priority into v_prio from workhorse.jobs j
       where j.namespace = p_namespace and j.queue = v_queue and j.status = 'ready' and j.priority > v_prio
       order by j.priority limit 1;
    end loop;
    -- A waiting job's wake time (or timeout) counts too: the claim then promotes it.
    v_at := null;
    select j.run_at into v_at from workhorse.jobs j
     where j.namespace = p_namespace and j.queue = v_queue and j.status = 'waiting'
       and j.run_at > now() and j.run_at <= coalesce(v_best, v_until) and j.type = any(p_types)
     order by j.run_at limit 1;
    if v_at is not null then v_best := v_at; end if;
  end loop;
  return ceil(date_part('epoch', v_best - now()) * 1000)::integer;
end $$;
comment on function workhorse.next_due_v1(text, text[], text[], integer) is
  'Milliseconds (by the database clock, rounded up) until the earliest ready job of p_types in p_queues that is not due yet comes due, or a waiting job of theirs reaches its wake time or timeout (the claim promotes it), looking at most p_within_ms ahead; null when none is due within it (or p_types is empty). Skips paused queues. Jobs already due are not counted (a claim takes those). Reads only; one index probe per distinct priority of each queue, and past 64 priorities it answers p_within_ms.';

-- registry: the worker registry is the only membership list. A worker
-- registers before it claims (claim_many_v1 refuses an unregistered worker)
-- and deregisters when it stops; between the two it refreshes its row on
-- its own registry interval.

create function workhorse.register_worker_v1(
  p_namespace text, p_worker_id text, p_build text, p_kind text, p_queues text[],
  p_types text[], p_concurrency integer, p_heartbeat_ms integer, p_deadline timestamptz default null)
returns timestamptz language plpgsql as $$
declare
  v_now timestamptz;
begin
  perform workhorse.check_namespace_v1(p_namespace);
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
  returning now() into v_now;
  return v_now;
end $$;
comment on function workhorse.register_worker_v1(text, text, text, text, text[], text[], integer, integer, timestamptz) is
  'Creates or refreshes the registry row of (namespace, worker id): build, kind (process | tick), queues, the job types it has handlers for, concurrency, heartbeat interval (its lease is 4 of them, it is dead after 7) and, for a tick, its deadline. Re-registering clears an operator pause (it dies with the incarnation). Refuses a malformed namespace (WH422). Returns the database clock.';

-- Deregistration expires only the leases the stopping process names
-- (p_held: the handlers it abandons, still running or stuck), never every
-- lease under its worker id: two processes given one id by mistake (replicas
-- started from one config) would otherwise have the first one to stop
-- expire the other's leases, and a peer's recovery run those jobs a second
-- time while they still ran.
create function workhorse.release_unstarted_v1(
  p_namespace text, p_worker_id text, p_unstarted bigint[], p_executions bigint[] default null)
returns integer language plpgsql as $$
declare
  v_released integer;
  v_queues text[];
  v_ids bigint[];
  v_executions bigint[];
begin
  -- Leases are locked first and deleted last (see complete_many_v1).
  with rel as (
    select r.job_id, r.execution, r.attempt, r.claimed_at from workhorse.job_runtime r
     where r.namespace = p_namespace and r.worker_id = p_worker_id and r.job_id = any(p_unstarted)
       and (p_executions is null or (r.job_id, r.execution) in (select * from unnest(p_unstarted, p_executions)))
       for update
  ), upd as (
    -- The job row is still `ready` (a claim does not write it): only the last execution is recorded.
    update workhorse.jobs j set execution = rel.execution, updated_at = now()
      from rel
     where j.id = rel.job_id
    returning j.id, rel.execution, rel.attempt, j.queue, rel.claimed_at
  ), gates as (
    delete from workhorse.job_gates g using upd where g.namespace = p_namespace and g.job_id = upd.id
  ), ledger as (
    insert into workhorse.job_attempts (job_id, execution, attempt, namespace, worker_id, outcome, started_at)
    select upd.id, upd.execution, upd.attempt, p_namespace, p_worker_id, 'released', upd.claimed_at from upd
  )
  select count(*), array_agg(distinct upd.queue), coalesce(array_agg(upd.id), '{}'), coalesce(array_agg(upd.execution), '{}')
    into v_released, v_queues, v_ids, v_executions from upd;
  perform workhorse.drop_leases_v1(p_namespace, v_ids, v_executions);
  perform workhorse.notify_wake_v1(p_namespace, q, 0) from unnest(v_queues) q;
  return v_released;
end $$;
comment on function workhorse.release_unstarted_v1(text, text, bigint[], bigint[]) is
  'Hands back the leases in p_unstarted that are still this worker''s (claimed, handler never started), and, when p_executions is given (same length), only at those executions: their jobs go back to ready with no attempt counted (ledger outcome released), and each queue that got one back is woken (notify_wake_v1, due now). Called by begin_drain_v1 and deregister_worker_v2. Safe to repeat. Returns how many were released.';

-- A stopping worker's drain begins: it claims no more, its running handlers
-- finish. Its registry row says so (the Workers page shows it draining, and
-- the unhandled_type alert no longer counts it), and the jobs it claimed
-- ahead go back at once instead of being held for the drain.
create function workhorse.begin_drain_v1(
  p_namespace text, p_worker_id text, p_unstarted bigint[], p_executions bigint[])
returns integer language plpgsql as $$
begin
  perform workhorse.check_lengths_v1('begin_drain_v1', cardinality(p_unstarted), cardinality(p_executions));
  update workhorse.worker_registry set state = 'draining'
   where namespace = p_namespace and id = p_worker_id and state <> 'draining';
  return workhorse.release_unstarted_v1(p_namespace, p_worker_id, p_unstarted, p_executions);
end $$;
comment on function workhorse.begin_drain_v1(text, text, bigint[], bigint[]) is
  'A stopping worker''s drain begins: marks its registry row draining (a heartbeat or refresh keeps that state; registering again makes it active) and hands back the leases (p_unstarted, p_executions) as release_unstarted_v1 does; a lease at another execution (the job claimed again since, say by another process given the same worker id) is left alone. Refuses arrays of different lengths with WH422. Safe to repeat. Returns how many were released.';

create function workhorse.deregister_worker_v2(
  p_namespace text, p_worker_id text, p_unstarted bigint[], p_held_ids bigint[], p_held_executions bigint[])
returns integer language plpgsql as $$
declare
  v_released integer;
begin
  perform workhorse.check_lengths_v1('deregister_worker_v2', cardinality(p_held_ids), cardinality(p_held_executions));
  v_released := workhorse.release_unstarted_v1(p_namespace, p_worker_id, p_unstarted);

  update workhorse.job_runtime r set expires_at = now()
    from unnest(p_held_ids, p_held_executions) as t(job_id, execution)
   where r.job_id = t.job_id and r.execution = t.execution
     and r.namespace = p_namespace and r.worker_id = p_worker_id;

  delete from workhorse.worker_registry where namespace = p_namespace and id = p_worker_id;
  return v_released;
end $$;
comment on function workhorse.deregister_worker_v2(text, text, bigint[], bigint[], bigint[]) is
  'Removes the registry row. The leases in p_unstarted (claimed, handler never started) go back to ready with no attempt counted (ledger outcome released); the leases (p_held_ids, p_held_executions) still this worker''s are expired at once, so the next recovery pass returns them; any other lease under this worker id is left alone (another process given the same id may hold it; it expires on its own if nobody heartbeats it). Refuses held arrays of different lengths with WH422. Safe to repeat. Returns how many were released, and wakes each queue that got one back (notify_wake_v1, due now).';

-- The first form: every lease under the worker id is expired, whichever
-- process holds it. Kept for callers written against it.
create function workhorse.deregister_worker_v1(p_namespace text, p_worker_id text, p_unstarted bigint[] default '{}')
returns integer language sql as $$
  select workhorse.deregister_worker_v2(p_namespace, p_worker_id, p_unstarted,
    coalesce((select array_agg(r.job_id order by r.job_id) from workhorse.job_runtime r
               where r.namespace = p_namespace and r.worker_id = p_worker_id), '{}'),
    coalesce((select array_agg(r.execution order by r.job_id) from workhorse.job_runtime r
               where r.namespace = p_namespace and r.worker_id = p_worker_id), '{}'))
$$;
comment on function workhorse.deregister_worker_v1(text, text, bigint[]) is
  'deregister_worker_v2 with every lease held under this worker id as p_held: removes the registry row, releases p_unstarted (no attempt counted, ledger outcome released) and expires every other lease of the worker id at once, so the next recovery pass returns it. Safe to repeat. Returns how many were released.';

-- The registry refresh: a worker calls it on its own interval
-- (registryIntervalMs), apart from the heartbeat, so an operator pause
-- reaches it within that interval whatever its lease.
create function workhorse.refresh_worker_v1(p_namespace text, p_worker_id text, p_active integer)
returns table (registered boolean, paused boolean, peers integer) language plpgsql as $$
declare
  v_queues text[];
  v_paused boolean;
begin
  update workhorse.worker_registry w
     set last_seen = now(), active = p_active, state = case when w.state = 'dead' then 'active' else w.state end
   where w.namespace = p_namespace and w.id = p_worker_id
  returning w.queues, w.operator_paused into v_queues, v_paused;
  if not found then
    return query select false, false, 0;
    return;
  end if;
  return query select true, v_paused,
    (select count(*)::integer from workhorse.worker_registry o
      where o.namespace = p_namespace and o.id <> p_worker_id and o.state <> 'dead' and o.queues && v_queues);
end $$;
comment on function workhorse.refresh_worker_v1(text, text, integer) is
  'Refreshes a worker''s registry row (last_seen, active = p_active handlers). Returns registered (false when the row is gone: register again), paused (the operator pause) and peers (other live workers sharing any of its queues: with none, a wake hint needs no stagger).';

-- heartbeat: one statement per worker whatever its load, on one timer.

create function workhorse.heartbeat_many_v1(
  p_namespace text, p_worker_id text, p_job_ids bigint[], p_executions bigint[],
  p_active integer, p_lease_ms integer, p_recover_limit integer default 100, p_started boolean[] default null,
  p_release_unknown_ms integer default null)
returns table (accepted bigint[], registered boolean, paused boolean, recovered integer)
language plpgsql as $$
declare
  v_accepted bigint[];
  v_registered boolean;
  v_paused boolean;
begin
  perform workhorse.check_lengths_v1('heartbeat_many_v1', cardinality(p_job_ids), cardinality(p_executions),
                                     coalesce(cardinality(p_started), cardinality(p_job_ids)));
  update workhorse.worker_registry w
     set last_seen = now(), active = p_active, state = case when w.state = 'dead' then 'active' else w.state end
   where w.namespace = p_namespace and w.id = p_worker_id
  returning true, w.operator_paused into v_registered, v_paused;

  -- Never waits for a lease row: one locked by someone else is being
  -- settled, cancelled or recovered right now. NO KEY UPDATE does not
  -- conflict with a transactional step's KEY SHARE lock. The lease runs
  -- from now, not from the statement's start (which a lock on the table
  -- may have held back: claim.sql).
  update workhorse.job_runtime r
     set expires_at = clock_timestamp() + p_lease_ms * interval '1 millisecond',
         started = r.started or coalesce(t.started, false)
    from unnest(p_job_ids, p_executions,
                coalesce(p_started, array_fill(false, array[cardinality(p_job_ids)])))
         as t(job_id, execution, started)
   where r.job_id = t.job_id
     and r.job_id in (
       select l.job_id from workhorse.job_runtime l
         join unnest(p_job_ids, p_executions) as u(job_id, execution)
           on l.job_id = u.job_id and l.execution = u.execution
        where l.worker_id = p_worker_id
        for no key update of l skip locked);

  -- Leases of this worker that it does not hold: a claim that committed
  -- after its connection was lost, so the worker never saw its answer. Their
  -- handlers never ran: expired and marked unstarted, they are handed back
  -- by the recovery pass below (or any other) without an attempt (orphaned).
  -- Only those claimed within the window since that claim was sent: a
  -- second process given the same worker id (replicas from one config)
  -- keeps its older leases.
  if p_release_unknown_ms is not null then
    update workhorse.job_runtime r
       set expires_at = now() - interval '1 millisecond', started = false
     where r.job_id in (
       select l.job_id from workhorse.job_runtime l
        where l.namespace = p_namespace and l.worker_id = p_worker_id and l.job_id <> all(p_job_ids)
          and l.claimed_at >= now() - p_release_unknown_ms * interval '1 millisecond'
        for no key update of l skip locked);
  end if;

  select coalesce(array_agg(r.job_id), '{}') into v_accepted
    from workhorse.job_runtime r
    join unnest(p_job_ids, p_executions) as t(job_id, execution)
      on r.job_id = t.job_id and r.execution = t.execution
   where r.worker_id = p_worker_id;

  return query select v_accepted, coalesce(v_registered, false), coalesce(v_paused, false),
    case when p_recover_limit > 0 then workhorse.recover_expired_v1(p_namespace, p_recover_limit) else 0 end;
end $$;
comment on function workhorse.heartbeat_many_v1(text, text, bigint[], bigint[], integer, integer, integer, boolean[], integer) is
  'The worker''s heartbeat: refreshes its registry row (last_seen, active = p_active handlers), extends by p_lease_ms every lease in (p_job_ids, p_executions) that is still this worker''s, marks those flagged in p_started (parallel, optional) as started, and runs recover_expired_v1(p_namespace, p_recover_limit) when the limit is above 0. Returns accepted (the job ids whose lease is still this worker''s at that execution: the worker must abort every other handler), registered (false when its registry row is gone: register again), paused (the operator pause), recovered. Never waits for a lease locked by someone else. With p_release_unknown_ms, every other lease of this worker claimed within that many ms (one a claim took after the worker lost its connection, never seen by it) is expired as unstarted first, so recovery hands its job back without counting an attempt: pass it only while no claim of the worker is in flight, with the time since the failed claim was sent (and some slack). Refuses arrays of different lengths with WH422. Call it every heartbeat interval; p_lease_ms is the worker''s lease (4 intervals by default in the TypeScript worker, or its leaseMs).';

-- recovery: return the work of workers that stopped heartbeating. It rides
-- every heartbeat (and the tick's start), bounded per pass, so it cannot get
-- stuck behind the crash it repairs. It never waits for a row lock: a lease
-- a transactional step holds, or a registry row its worker is heartbeating
-- right now, is skipped (waiting on them let two heartbeats deadlock).

create function workhorse.recover_expired_v1(p_namespace text, p_limit integer default 100)
returns integer language plpgsql as $$
declare
  v_recovered integer;
  v_ids bigint[];
  v_executions bigint[];
  v_parents bigint[];
begin
  -- Leases are locked first and deleted last, after their job rows are
  -- written (the order settlements use; see complete_many_v1).
  with expired as (
    select r.job_id, r.execution, r.attempt, r.worker_id, r.claimed_at, r.started
      from workhorse.job_runtime r
     where r.namespace = p_namespace and r.expires_at < now()
     order by r.expires_at
     limit p_limit
     for update skip locked
  ), lapsed as (
    select e.job_id, e.execution, e.attempt, e.worker_id, e.claimed_at,
           e.started or (select count(*) from workhorse.job_attempts a
                          where a.job_id = e.job_id and a.outcome = 'orphaned') >= 2 as counted
      from expired e
  ), upd as (
    -- The job row is still `ready` (a claim does not write it); a counted
    -- attempt is written to it, and ends it failed when it was the last.
    update workhorse.jobs j
       set status = case when d.counted and d.attempt >= j.max_attempts then 'failed' else 'ready' end,
           attempt = case when d.counted then d.attempt else j.attempt end,
           execution = d.execution,
           last_worker = d.worker_id,
           run_at = case when d.counted then now() else j.run_at end,
           finished_at = case when d.counted and d.attempt >= j.max_attempts then now() end,
           started_at = case when d.counted then d.claimed_at else j.started_at end,
           last_error = case when d.counted then jsonb_build_object('name', 'LeaseExpired',
                          -- Why the lease was not renewed is the worker's to say (a crash, a stop at a drain deadline, a
                          -- heartbeat the database refused or could not receive): this names no single cause.
                          'message', 'lease expired: worker ' || d.worker_id || ' did not renew it in time (it stopped or crashed, or its heartbeats did not reach the database)',
                          'attempt', d.attempt, 'worker', d.worker_id) else j.last_error end,
           updated_at = now()
      from lapsed d
     where j.id = d.job_id
    returning j.id, d.execution, d.attempt, j.queue, j.status, j.last_error, j.parent_id, d.worker_id, d.claimed_at, d.counted,
              j.type, j.max_attempts
  ), gates as (
    delete from workhorse.job_gates g using upd where g.namespace = p_namespace and g.job_id = upd.id
  ), ledger as (
    insert into workhorse.job_attempts (job_id, execution, attempt, namespace, worker_id, outcome, error, started_at)
    select upd.id, upd.execution, upd.attempt, p_namespace,
           upd.worker_id, case when upd.counted then 'recovered' else 'orphaned' end,
           case when upd.counted then upd.last_error end, upd.claimed_at
      from upd
    on conflict do nothing
  ), lifecycle as (
    -- A counted attempt is a failure like a settled one (fail_many_v1's
    -- events, settlement_event_v1's payload): failed while attempts remain,
    -- dead after the last.
    insert into workhorse.outbox_events (namespace, topic, key, payload)
    select p_namespace, 'workhorse.job.' || e.event, 'job:' || upd.id,
           workhorse.settlement_event_v1(e.event, upd.id, upd.type, upd.queue, upd.attempt, upd.max_attempts, upd.last_error)
      from upd cross join lateral (select case when upd.status = 'failed' then 'dead' else 'failed' end as event) e
     where upd.counted and upd.type not like 'sys.%' and workhorse.publishes_lifecycle_v1(p_namespace, e.event)
  ), notified as (
    select workhorse.notify_wake_v1(p_namespace, q.queue, 0)
      from (select distinct upd.queue from upd where upd.status = 'ready') q
  )
  select count(*), coalesce(array_agg(upd.id), '{}'), coalesce(array_agg(upd.execution), '{}'),
         array_agg(upd.parent_id) filter (where upd.parent_id is not null and upd.status = 'failed')
    into v_recovered, v_ids, v_executions, v_parents
    from upd, (select count(*) from notified) n;
  perform workhorse.drop_leases_v1(p_namespace, v_ids, v_executions);
  if v_parents is not null then perform workhorse.wake_parents_v1(v_parents); end if;
  if v_recovered > 0 and (workhorse.publishes_lifecycle_v1(p_namespace, 'failed') or workhorse.publishes_lifecycle_v1(p_namespace, 'dead')) then
    perform pg_notify(workhorse.outbox_channel_v1(p_namespace), '0');
  end if;

  update workhorse.worker_registry w set state = 'dead'
   where (w.namespace, w.id) in (
     select s.namespace, s.id from workhorse.worker_registry s
      where s.namespace = p_namespace and s.state <> 'dead'
        and s.last_seen < now() - 7 * s.heartbeat_ms * interval '1 millisecond'
        for update skip locked);
  delete from workhorse.worker_registry w
   where (w.namespace, w.id) in (
     select s.namespace, s.id from workhorse.worker_registry s
      where s.namespace = p_namespace and s.state = 'dead'
        and s.last_seen < now() - 7 * s.heartbeat_ms * interval '1 millisecond' - interval '1 minute'
        for update skip locked);
  return v_recovered;
end $$;
comment on function workhorse.recover_expired_v1(text, integer) is
  'Returns up to p_limit expired leases to their jobs: a lease whose handler started counts its attempt (ready again, or failed when that was the last one; ledger outcome recovered); one that never started gives its attempt back (ready; outcome orphaned), unless the job was orphaned twice already, so a job that kills its worker every time still ends failed. Releases their gates, wakes each queue that got a ready job (notify_wake_v1, due now) and the parents joining a child that ended failed (wake_parents_v1); when the namespace publishes them, a counted attempt writes a workhorse.job.failed (ready again) or workhorse.job.dead (failed for good) outbox event with fail_many_v1''s payload. Marks workers silent for 7 of their heartbeats dead and removes rows dead for a further minute. Skips rows locked by others. Returns how many leases it recovered.';

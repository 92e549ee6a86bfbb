-- retention: the sys.retention slot's one bounded batch. Each batch is its
-- own short statement, so no transaction stays open long.

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
       -- A child stays while its parent exists: an unfinished parent may
       -- still join it, and so may a failed or cancelled one that is retried
       -- (its open join waits again). A child whose finished parent was
       -- deleted goes in a later batch (a join of a deleted child is refused
       -- as no job; one already open counted the child as unfinished).
       and (j.parent_id is null or not exists (select 1 from workhorse.jobs p where p.id = j.parent_id))
     order by j.finished_at
     limit p_limit
     for update skip locked
  ), steps as (
    delete from workhorse.job_steps s using doomed d where s.job_id = d.id
  ), attempts as (
    delete from workhorse.job_attempts a using doomed d where a.job_id = d.id
  ), waits as (
    delete from workhorse.job_waits w using doomed d where w.job_id = d.id
  ), signals as (
    delete from workhorse.job_signals s using doomed d where s.job_id = d.id or s.consumed_by = d.id
  ), children as (
    delete from workhorse.job_children c using doomed d where c.parent_id = d.id
  ), gone as (
    delete from workhorse.jobs j using doomed d where j.id = d.id returning j.id
  )
  select count(*) into v_jobs from gone;

  delete from workhorse.worker_registry w
   where (w.namespace, w.id) in (
     select s.namespace, s.id from workhorse.worker_registry s
      where s.namespace = p_namespace
        and (s.state = 'dead' or s.last_seen < now() - 7 * s.heartbeat_ms * interval '1 millisecond')
        for update skip locked);
  get diagnostics v_workers = row_count;
  return query select v_jobs, v_workers;
end $$;
comment on function workhorse.retention_v1(text, bigint, integer) is
  'Deletes up to p_limit terminal jobs (succeeded, failed, cancelled) that finished more than p_older_than_ms ago, with their attempts and steps ledgers, their waits, the signals they received and their children links (the children are jobs of their own), and never a child whose parent still exists (an unfinished parent may still join it, and so may a failed or cancelled one retried: a child goes in a batch after its parent); and the registry rows of workers dead or silent for 7 heartbeats (skipping rows locked by others). Never touches a ready, running or waiting job (a waiting job is unfinished however long it waits). Returns (jobs, workers) deleted.';

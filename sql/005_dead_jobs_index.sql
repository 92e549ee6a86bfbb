-- 005_dead_jobs_index: listing failed or cancelled jobs (the dead letters an
-- operator looks at) without walking the whole table. list_jobs_v1 pages
-- newest first along the primary key; for a status most rows have
-- (succeeded) that finds a page at once, but for a rare one it read every
-- row. A partial index holds only failed and cancelled rows, so the hot path
-- (ready -> running -> succeeded) never writes to it.
--
-- Caveat: like every migration this runs in one transaction, so the index
-- is built without CONCURRENTLY and blocks writes to jobs while it builds
-- (seconds per few million rows).
create index jobs_dead_idx on workhorse.jobs (namespace, id)
  where status in ('failed', 'cancelled');

-- Same results as before. For failed/cancelled the query states the index's
-- predicate literally, so the planner can use it in a generic plan too.
create or replace function workhorse.list_jobs_v1(
  p_namespace text, p_status text, p_queue text, p_type text, p_limit integer, p_before_id bigint)
returns setof workhorse.jobs language plpgsql stable as $$
begin
  if p_status in ('failed', 'cancelled') then
    return query
    select * from workhorse.jobs j
     where j.namespace = p_namespace
       and j.status in ('failed', 'cancelled') and j.status = p_status
       and (p_queue is null or j.queue = p_queue)
       and (p_type is null or j.type = p_type)
       and (p_before_id is null or j.id < p_before_id)
     order by j.id desc
     limit p_limit;
  else
    return query
    select * from workhorse.jobs j
     where j.namespace = p_namespace
       and (p_status is null or j.status = p_status)
       and (p_queue is null or j.queue = p_queue)
       and (p_type is null or j.type = p_type)
       and (p_before_id is null or j.id < p_before_id)
     order by j.id desc
     limit p_limit;
  end if;
end $$;

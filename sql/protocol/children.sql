-- children: jobs a running job spawns (once per name, under the fence) and
-- how their end wakes a parent that joins them. The spawn is one
-- transaction: begin_spawn_v1 holds the fence and finds an earlier spawn of
-- the name, the enqueue inserts the child, link_child_v1 records it. A
-- child carries its parent's id, so only settlements of children look for
-- a parent to wake (wake_parents_v1), after their own leases are gone.

create function workhorse.begin_spawn_v1(p_namespace text, p_job_id bigint, p_execution bigint, p_name text)
returns bigint language plpgsql as $$
declare
  v_child bigint;
begin
  perform workhorse.hold_fence_v1(p_namespace, p_job_id, p_execution);
  select c.child_id into v_child from workhorse.job_children c where c.parent_id = p_job_id and c.name = p_name;
  return v_child;
end $$;
comment on function workhorse.begin_spawn_v1(text, bigint, bigint, text) is
  'Opens the spawn of child p_name inside the caller''s transaction: holds the fence (KEY SHARE on the lease until commit; WH409 when stale) and returns the id of the child spawned under that name before (a replay: spawn nothing), or null.';

create function workhorse.link_child_v1(
  p_namespace text, p_job_id bigint, p_execution bigint, p_name text, p_child_id bigint, p_detached boolean)
returns bigint language plpgsql as $$
declare
  v_child bigint;
begin
  perform workhorse.hold_fence_v1(p_namespace, p_job_id, p_execution);
  insert into workhorse.job_children (parent_id, name, child_id, detached)
  values (p_job_id, p_name, p_child_id, coalesce(p_detached, false))
  on conflict (parent_id, name) do nothing
  returning child_id into v_child;
  if v_child is null then
    raise exception 'child "%" of job % was spawned concurrently', p_name, p_job_id using errcode = 'WH409';
  end if;
  update workhorse.jobs set parent_id = p_job_id where id = p_child_id and namespace = p_namespace;
  return v_child;
end $$;
comment on function workhorse.link_child_v1(text, bigint, bigint, text, bigint, boolean) is
  'Records job p_child_id (enqueued in the same transaction) as child p_name of the running job, under the fence, and marks the child with its parent. A detached child is not cancelled with its parent. WH409 when stale or when the name was spawned meanwhile (the transaction must roll back).';

create function workhorse.wake_parents_v1(p_parent_ids bigint[])
returns integer language plpgsql as $$
declare
  v_parent bigint;
  v_status text;
  v_name text;
  v_woken integer := 0;
begin
  -- Parents in id order, so two settlements never lock them crosswise.
  -- NO KEY UPDATE (what the update needs): it serialises with other wakes,
  -- signals and suspends, but not with the KEY SHARE a cancel_v1 of the
  -- parent holds while it waits for this child's lease.
  for v_parent in select distinct p from unnest(p_parent_ids) p where p is not null order by 1 loop
    select j.status into v_status from workhorse.jobs j where j.id = v_parent for no key update;
    continue when not found or v_status in ('succeeded', 'failed', 'cancelled');
    for v_name in select w.name from workhorse.job_waits w
                   where w.job_id = v_parent and w.kind = 'join' and w.resolved_at is null loop
      if workhorse.resolve_wait_v1(v_parent, v_name) and v_status = 'waiting' then
        perform workhorse.wake_job_v1(v_parent);
        v_status := 'ready';
        v_woken := v_woken + 1;
      end if;
    end loop;
  end loop;
  return v_woken;
end $$;
comment on function workhorse.wake_parents_v1(bigint[]) is
  'After children ended: resolves each parent''s open join waits that their ends satisfy and makes a waiting parent ready (its queue woken); a running parent whose handler left such a join open is made ready by its suspension (suspend_many_v1). Parents are locked in id order (FOR NO KEY UPDATE). Returns how many parents it woke. Called by settlements, cancellation and recovery after their own leases are deleted.';

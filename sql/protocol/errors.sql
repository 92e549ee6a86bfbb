-- errors: the SQLSTATEs the protocol raises on purpose, and the checks
-- every batch function shares.
--   WH409  stale lease: the (job, execution) fence no longer holds; nothing was written
--   WH404  the worker is not registered (it was declared dead): register again
--   WH422  invalid arguments (parallel arrays of different lengths, unknown keys, a name over its limit)
--   WH426  the schema is not the version the caller expects (detail: the version found)

create function workhorse.raise_stale_v1(p_job_id bigint, p_execution bigint)
returns void language plpgsql as $$
begin
  raise exception 'stale lease: job % execution % is no longer leased by this owner', p_job_id, p_execution
    using errcode = 'WH409';
end $$;
comment on function workhorse.raise_stale_v1(bigint, bigint) is
  'Raises WH409 (stale lease) for a write whose (job, execution) lease is gone. Used by hold_fence_v1 and set_progress_v1; settlements leave a refused id out of their answer instead.';

-- The fence of a context write: the lease (job, execution) must still
-- exist; KEY SHARE holds it until the caller's transaction ends, so a
-- recovery or a settlement cannot delete it under the write.
create function workhorse.hold_fence_v1(p_namespace text, p_job_id bigint, p_execution bigint)
returns void language plpgsql as $$
begin
  perform 1 from workhorse.job_runtime r
   where r.job_id = p_job_id and r.execution = p_execution and r.namespace = p_namespace
   for key share;
  if not found then perform workhorse.raise_stale_v1(p_job_id, p_execution); end if;
end $$;
comment on function workhorse.hold_fence_v1(text, bigint, bigint) is
  'Holds the fence of a write by the owner of lease (p_job_id, p_execution): KEY SHARE on the lease row until the transaction ends, or WH409 (raise_stale_v1) when the lease is gone. Used by record_step_v1, begin_tx_step_v1, begin_wait_v1, begin_spawn_v1 and link_child_v1.';

create function workhorse.check_lengths_v1(p_what text, variadic p_lengths integer[])
returns void language plpgsql immutable as $$
begin
  if (select count(distinct coalesce(l, 0)) from unnest(p_lengths) l) > 1 then
    raise exception '%: parallel arrays have different lengths (%)', p_what, array_to_string(p_lengths, ', ')
      using errcode = 'WH422';
  end if;
end $$;
comment on function workhorse.check_lengths_v1(text, integer[]) is
  'Raises WH422 unless every given array length is the same (null counts as 0). Batch functions call it before writing anything.';

create function workhorse.check_namespace_v1(p_namespace text)
returns void language plpgsql immutable as $$
begin
  if p_namespace is null or p_namespace !~ '^[A-Za-z0-9_.-]{1,40}$' then
    raise exception 'invalid namespace %: 1-40 characters of letters, digits, "_", "." or "-"', coalesce(p_namespace, 'null')
      using errcode = 'WH422';
  end if;
end $$;
comment on function workhorse.check_namespace_v1(text) is
  'Raises WH422 unless the namespace is 1-40 characters of letters, digits, "_", "." or "-" (it also names the wake channel, so it stays short).';

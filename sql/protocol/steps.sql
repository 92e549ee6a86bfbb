-- steps: the writes a running handler makes, under the fence: progress,
-- checkpoints (a recorded step never runs again) and the opening of a
-- transactional step.

create function workhorse.set_progress_v1(p_namespace text, p_job_id bigint, p_execution bigint, p_progress jsonb)
returns void language plpgsql as $$
begin
  update workhorse.jobs j set progress = p_progress, updated_at = now()
   where j.id = p_job_id and j.namespace = p_namespace
     and exists (select 1 from workhorse.job_runtime r
                  where r.job_id = p_job_id and r.execution = p_execution);
  if not found then perform workhorse.raise_stale_v1(p_job_id, p_execution); end if;
end $$;
comment on function workhorse.set_progress_v1(text, bigint, bigint, jsonb) is
  'Stores a progress value on a running job. Refused with WH409 (nothing written) unless the lease (job id, execution) still exists.';

create function workhorse.record_step_v1(
  p_namespace text, p_job_id bigint, p_execution bigint, p_name text, p_result jsonb)
returns jsonb language plpgsql as $$
declare
  v_result jsonb;
begin
  perform workhorse.hold_fence_v1(p_namespace, p_job_id, p_execution);
  insert into workhorse.job_steps (job_id, name, result, execution)
  values (p_job_id, p_name, p_result, p_execution)
  on conflict (job_id, name) do nothing;
  select s.result into v_result from workhorse.job_steps s where s.job_id = p_job_id and s.name = p_name;
  return v_result;
end $$;
comment on function workhorse.record_step_v1(text, bigint, bigint, text, jsonb) is
  'Records step p_name''s JSON result for the job under the fence (KEY SHARE on the lease until commit). Refused with WH409 when the lease (job id, execution) is gone. An earlier record wins: returns the recorded result, which the client must use. Safe to repeat.';

-- A transactional step's record, written inside the step's own transaction
-- after its body: whether this call's insert wrote the row (won) is what it
-- reports, not a guess from the row's xmin, which is a subtransaction's id
-- when the body left a savepoint open (a `rollback to savepoint` included):
-- that guess said "lost", and the step's writes were rolled back. No row,
-- and nothing written, when the statement no longer runs in the step's
-- transaction p_txid (the body committed or rolled it back itself).
create function workhorse.record_tx_step_v1(
  p_namespace text, p_job_id bigint, p_execution bigint, p_name text, p_result jsonb, p_txid bigint)
returns table (recorded jsonb, won boolean) language plpgsql as $$
declare
  v_won boolean;
begin
  if txid_current() is distinct from p_txid then return; end if;
  perform workhorse.hold_fence_v1(p_namespace, p_job_id, p_execution);
  insert into workhorse.job_steps (job_id, name, result, execution)
  values (p_job_id, p_name, p_result, p_execution)
  on conflict (job_id, name) do nothing
  returning true into v_won;
  return query select s.result, coalesce(v_won, false) from workhorse.job_steps s where s.job_id = p_job_id and s.name = p_name;
end $$;
comment on function workhorse.record_tx_step_v1(text, bigint, bigint, text, jsonb, bigint) is
  'Records transactional step p_name''s JSON result inside the step''s transaction p_txid (no row, nothing written, when the statement runs in another: the body ended it), under the fence (KEY SHARE on the lease; WH409 when it is gone). Returns the recorded result and won = whether this call wrote it: false when a record committed earlier (wait for a concurrent one) wins, and the caller must then roll its own writes back.';

create function workhorse.begin_tx_step_v1(p_namespace text, p_job_id bigint, p_execution bigint, p_name text)
returns table (recorded boolean, result jsonb) language plpgsql as $$
begin
  perform workhorse.hold_fence_v1(p_namespace, p_job_id, p_execution);
  return query select true, s.result from workhorse.job_steps s where s.job_id = p_job_id and s.name = p_name;
  if not found then return query select false, null::jsonb; end if;
end $$;
comment on function workhorse.begin_tx_step_v1(text, bigint, bigint, text) is
  'Opens a transactional step inside the caller''s transaction: locks the lease row KEY SHARE (heartbeats may still extend it; recovery, settlement and cancel wait) so the fence cannot move before the caller commits, and returns (recorded, result): recorded = true with the stored result if step p_name already ran (the caller must not run it again). Refused with WH409 when the lease is gone. Outside a transaction it is a fenced read, which plain steps use before running their body.';

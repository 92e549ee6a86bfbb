-- signals: what the outside world sends a waiting job. A signal addressed
-- to a job, or to a key a wait chose, is stored in job_signals; when the
-- wait is open and its job is waiting, the wait is resolved and the job
-- made ready at once (its queue woken). One that arrives before its wait
-- opens is kept until the wait consumes it, never lost.
--
-- The second-signal rule: a job takes one signal per name (its wait of
-- that name can resolve once), so a second signal of a name the job already
-- received, or whose wait already resolved (by a timeout too), is refused
-- (outcome duplicate) and changes nothing. A key holds at most one
-- unconsumed signal per name; once a wait consumed it, the key may receive
-- that name again (for the next job that waits on the key).
--
-- A decision is a signal with an audit trail: it resolves an open decision
-- wait with { choice, by, comment, at }, only with one of the wait's
-- choices; anything else changes nothing.
--
-- Senders lock the job row; a suspending job locks it too (after its
-- lease), so a signal sent while the job is suspending is found by one of
-- the two. A signal sent while the job runs is kept and consumed by the
-- suspension (resolve_wait_v1 on each open wait); a decision resolves its
-- wait at once, and the suspension finds it by the run that left it open
-- (job_waits.pending_execution, see waits.sql).

create function workhorse.signal_job_v1(p_namespace text, p_job_id bigint, p_name text, p_payload jsonb)
returns text language plpgsql as $$
declare
  v_status text;
  v_id bigint;
begin
  select j.status into v_status from workhorse.jobs j
   where j.id = p_job_id and j.namespace = p_namespace for update;
  if not found then return 'not_found'; end if;
  if v_status in ('succeeded', 'failed', 'cancelled') then return 'ended'; end if;
  -- The name is a wait of another kind (a sleep, a decision, a join): no
  -- wait of it would ever take a signal, which kept it for ever.
  if exists (select 1 from workhorse.job_waits w
              where w.job_id = p_job_id and w.name = p_name and w.kind <> 'signal') then
    return 'not_a_signal';
  end if;
  -- A wait that resolved, or whose timeout passed by the database clock
  -- (it times out when the job resumes, however late a worker gets to it),
  -- takes no signal.
  if exists (select 1 from workhorse.job_waits w
              where w.job_id = p_job_id and w.name = p_name and (w.resolved_at is not null or w.wake_at <= now())) then
    return 'duplicate';
  end if;
  insert into workhorse.job_signals (namespace, job_id, name, payload)
  values (p_namespace, p_job_id, p_name, p_payload)
  on conflict (job_id, name) where job_id is not null do nothing
  returning id into v_id;
  if v_id is null then return 'duplicate'; end if;
  if v_status = 'waiting' and workhorse.resolve_wait_v1(p_job_id, p_name) then
    perform workhorse.wake_job_v1(p_job_id);
    return 'delivered';
  end if;
  return 'kept';
end $$;
comment on function workhorse.signal_job_v1(text, bigint, text, jsonb) is
  'Sends signal p_name with p_payload to a job. Returns delivered (the job was waiting for it: the wait is resolved, the job ready and its queue woken), kept (stored until the job''s wait of that name consumes it), duplicate (the job already received a signal of that name, or that wait already resolved or its timeout passed: nothing changes), not_a_signal (the job has a wait of that name that is a sleep, a decision or a join, which no signal resolves: nothing changes), ended (the job finished) or not_found.';

create function workhorse.signal_key_v1(p_namespace text, p_key text, p_name text, p_payload jsonb)
returns table (outcome text, job_id bigint) language plpgsql as $$
declare
  v_job bigint;
  v_status text;
  v_id bigint;
begin
  -- The oldest open wait of this key and name of a job that has not ended.
  -- An ended job can leave a wait open (cancelled while it waited, or a
  -- race it won by another wait): the signal is not kept for it, where no
  -- wait would ever consume it and the key would refuse the next one.
  loop
    select w.job_id into v_job from workhorse.job_waits w join workhorse.jobs j on j.id = w.job_id
     where w.namespace = p_namespace and w.key = p_key and w.name = p_name and w.resolved_at is null
       and (w.wake_at is null or w.wake_at > now())
       and j.status not in ('succeeded', 'failed', 'cancelled')
     order by w.started_at, w.job_id limit 1;
    exit when v_job is null;
    select j.status into v_status from workhorse.jobs j where j.id = v_job for update;
    -- Still going, and its wait still open: another signal to the key,
    -- sent at the same moment, may have taken that wait while we waited for
    -- the row (this one would have been kept for a wait that no longer
    -- takes it, and the key would refuse every signal after it).
    exit when v_status not in ('succeeded', 'failed', 'cancelled')
      and exists (select 1 from workhorse.job_waits w
                   where w.job_id = v_job and w.name = p_name and w.key = p_key and w.resolved_at is null
                     and (w.wake_at is null or w.wake_at > now()));
    -- It ended, or its wait was taken, while we waited for its row: look again.
    v_job := null;
    v_status := null;
  end loop;
  insert into workhorse.job_signals (namespace, key, name, payload)
  values (p_namespace, p_key, p_name, p_payload)
  on conflict (namespace, key, name) where key is not null and consumed_at is null do nothing
  returning id into v_id;
  if v_id is null then return query select 'duplicate'::text, null::bigint; return; end if;
  if v_status = 'waiting' and workhorse.resolve_wait_v1(v_job, p_name) then
    perform workhorse.wake_job_v1(v_job);
    return query select 'delivered'::text, v_job; return;
  end if;
  return query select 'kept'::text, v_job;
end $$;
comment on function workhorse.signal_key_v1(text, text, text, jsonb) is
  'Sends signal p_name with p_payload to whichever job waits on key p_key (waitForSignal with a key): the oldest open wait of the key and name whose job has not ended and whose timeout has not passed. Returns (delivered, job) when a job was waiting on it (resolved, ready, queue woken); (kept, job or null) when it is stored until a wait of that key and name consumes it (the oldest such wait first); (duplicate, null) when the key already holds an unconsumed signal of that name (nothing changes).';

create function workhorse.decide_v1(
  p_namespace text, p_job_id bigint, p_name text, p_choice text, p_by text, p_comment text)
returns table (outcome text, choices text[], value jsonb) language plpgsql as $$
declare
  v_status text;
  w workhorse.job_waits;
  v_value jsonb;
begin
  select j.status into v_status from workhorse.jobs j
   where j.id = p_job_id and j.namespace = p_namespace for update;
  if not found then return query select 'not_found'::text, null::text[], null::jsonb; return; end if;
  select * into w from workhorse.job_waits x where x.job_id = p_job_id and x.name = p_name for update;
  if not found or w.kind <> 'decision' then
    return query select 'no_decision'::text, null::text[], null::jsonb; return;
  end if;
  -- Decided, or timed out by the database clock (the job records the
  -- timeout when it resumes, however late a worker gets to it).
  if w.resolved_at is not null or w.wake_at <= now() then
    return query select 'resolved'::text, w.choices, w.value; return;
  end if;
  if v_status in ('succeeded', 'failed', 'cancelled') then
    return query select 'ended'::text, w.choices, null::jsonb; return;
  end if;
  if p_choice is null or not (p_choice = any(w.choices)) then
    return query select 'invalid_choice'::text, w.choices, null::jsonb; return;
  end if;
  v_value := jsonb_build_object('choice', p_choice, 'by', p_by, 'comment', p_comment, 'at', now());
  update workhorse.job_waits set resolved_at = now(), outcome = 'done', value = v_value
   where job_id = p_job_id and name = p_name;
  if v_status = 'waiting' then perform workhorse.wake_job_v1(p_job_id); end if;
  return query select 'decided'::text, w.choices, v_value;
end $$;
comment on function workhorse.decide_v1(text, bigint, text, text, text, text) is
  'Records a human decision on the job''s open decision wait p_name: value { choice, by, comment, at } (the audit trail, kept with the wait''s prompt, choices and start), and makes the job ready if it was waiting (a running job whose handler left the wait open is made ready by its suspension: suspend_many_v1). Returns (outcome, choices, value): decided; invalid_choice (p_choice is not one of choices: nothing changes); resolved (decided or timed out before, or its timeout passed: nothing changes, value is the recorded one); ended; no_decision (no decision wait of that name); not_found.';

create function workhorse.list_decisions_v1(p_namespace text, p_queue text, p_type text, p_limit integer)
returns table (job_id bigint, name text, prompt text, choices text[], started_at timestamptz, wake_at timestamptz,
               queue text, type text, job_status text)
language sql stable as $$
  select w.job_id, w.name, w.prompt, w.choices, w.started_at, w.wake_at, j.queue, j.type, j.status
    from workhorse.job_waits w join workhorse.jobs j on j.id = w.job_id
   where w.namespace = p_namespace and w.kind = 'decision' and w.resolved_at is null
     and (w.wake_at is null or w.wake_at > now())
     and j.status not in ('succeeded', 'failed', 'cancelled')
     and (p_queue is null or j.queue = p_queue)
     and (p_type is null or j.type = p_type)
   order by w.started_at, w.job_id
   limit p_limit
$$;
comment on function workhorse.list_decisions_v1(text, text, text, integer) is
  'The decisions waiting for people in the namespace, oldest first: open decision waits of unfinished jobs whose timeout has not passed, filtered by queue and job type when not null, at most p_limit. Walks the open-decisions index.';

-- waits: durable waits (sleeps, signals, decisions, joins) and the
-- suspension of a job that waits. A wait is a named row of job_waits,
-- opened under the fence by the running handler and kept once resolved, so
-- a replay of the handler returns its recorded outcome. A wait that is not
-- satisfied when it opens suspends the job: its lease ends and its row
-- becomes `waiting`, due at the wait's wake time (the database clock) or
-- never (9999-01-01) for a wait without one. A waiting job becomes ready
-- again when it is due (the claim promotes it) or when what it waits for
-- arrives (signals.sql, children.sql wake it and its queue).
--
-- A handler may open several waits before it suspends on one of them. A
-- decision or a child's end can resolve one of them in between, while the
-- job still holds its lease and so cannot be woken; each open wait records
-- the run that waits on it (pending_execution), and the suspension of that
-- run finds the wait resolved and makes the job ready instead of waiting.
--
-- A wake-up is not an attempt: the suspension leaves the row's attempt as
-- it was, so the resumed claim's attempt (the row's + 1) is the same number
-- again; attempts count failures. The execution moves on as with every
-- lease, so a stale owner of the suspended run is refused everywhere.

create function workhorse.never_v1()
returns timestamptz language sql immutable parallel safe as $$ select timestamptz '9999-01-01 00:00:00+00' $$;
comment on function workhorse.never_v1() is
  'The run_at of a job waiting without a wake time (a signal, decision or join without timeout): 9999-01-01 UTC, never due. A finite value, so readers can subtract it from now().';

-- Tries to resolve one open wait from what has arrived: a sleep whose wake
-- time passed, a signal kept for it (addressed to the job, or to the wait's
-- key), children that ended, or a timeout. Returns whether the wait is
-- resolved (now or before). Never waits for another consumer's signal row.
create function workhorse.resolve_wait_v1(p_job_id bigint, p_name text)
returns boolean language plpgsql as $$
declare
  w workhorse.job_waits;
  v_signal bigint;
  v_payload jsonb;
  v_sent timestamptz;
  v_done timestamptz;
  v_total integer;
  v_ended integer;
  v_ok integer;
begin
  select * into w from workhorse.job_waits x where x.job_id = p_job_id and x.name = p_name for update;
  if not found then return false; end if;
  if w.resolved_at is not null then return true; end if;
  if w.kind = 'signal' then
    -- Only a signal sent before the timeout: one that came later belongs to
    -- no wait that timed out, even if no worker resumed the job meanwhile.
    select s.id, s.payload, s.sent_at into v_signal, v_payload, v_sent from workhorse.job_signals s
     where s.job_id = p_job_id and s.name = p_name and s.consumed_at is null
       and (w.wake_at is null or s.sent_at < w.wake_at)
     for update skip locked;
    if v_signal is null and w.key is not null then
      select s.id, s.payload, s.sent_at into v_signal, v_payload, v_sent from workhorse.job_signals s
       where s.namespace = w.namespace and s.key = w.key and s.name = p_name and s.consumed_at is null
         and (w.wake_at is null or s.sent_at < w.wake_at)
       for update skip locked;
    end if;
    if v_signal is not null then
      update workhorse.job_signals set consumed_by = p_job_id, consumed_at = now() where id = v_signal;
      -- Resolved when the signal came (or when the wait opened, for one kept from before):
      -- the time of the event, not of this call, so a race's winner does not depend on
      -- which of two concurrent calls commits first.
      update workhorse.job_waits set resolved_at = greatest(v_sent, w.started_at), outcome = 'done', value = v_payload
       where job_id = p_job_id and name = p_name;
      return true;
    end if;
  elsif w.kind = 'join' then
    -- v_done: when the join was satisfied (its last child ended; for mode any, its first success).
    select count(*), count(*) filter (where j.status in ('succeeded', 'failed', 'cancelled')),
           count(*) filter (where j.status = 'succeeded'),
           case when w.mode = 'any' and count(*) filter (where j.status = 'succeeded') > 0
                then min(j.finished_at) filter (where j.status = 'succeeded')
                else max(j.finished_at) end
      into v_total, v_ended, v_ok, v_done
      from workhorse.jobs j where j.id = any(w.children);
    if v_ended = v_total or (w.mode = 'any' and v_ok > 0) then
      update workhorse.job_waits set resolved_at = least(now(), greatest(coalesce(v_done, now()), w.started_at)), outcome = 'done', value = (
        select coalesce(jsonb_agg(jsonb_build_object(
                 'id', c.id::text,
                 'status', case when j.status in ('succeeded', 'failed', 'cancelled') then j.status else 'unfinished' end,
                 'result', case when j.status = 'succeeded' then j.result end,
                 'error', case when j.status in ('failed', 'cancelled') then coalesce(j.last_error,
                            jsonb_build_object('name', 'JobCancelledError', 'message', 'job ' || c.id || ' was cancelled')) end)
               order by c.ord), '[]'::jsonb)
          from unnest(w.children) with ordinality c(id, ord) left join workhorse.jobs j on j.id = c.id)
       where job_id = p_job_id and name = p_name;
      return true;
    end if;
  end if;
  -- A sleep ends, and any other wait times out, at its wake time (its resolved_at, whenever this runs).
  if w.wake_at is not null and w.wake_at <= now() then
    update workhorse.job_waits set resolved_at = w.wake_at, outcome = case when w.kind = 'sleep' then 'done' else 'timeout' end
     where job_id = p_job_id and name = p_name;
    return true;
  end if;
  return false;
end $$;
comment on function workhorse.resolve_wait_v1(bigint, text) is
  'Resolves the open wait p_name of the job if it can be, its resolved_at the time of the event that satisfied it (a sleep''s or a timeout''s wake time, the signal''s sending or the wait''s opening if later, its children''s ending), not of this call: a sleep whose wake time passed (outcome done); a signal kept for it and sent before its timeout, addressed to the job first, then to the wait''s key (consumed; value = its payload); a join whose children ended (all of them, or for mode any one that succeeded; value = each child''s id, status, result and error, in order); any other wait whose wake time passed (outcome timeout). Returns true when the wait is resolved, now or before; false when it still waits or does not exist.';

create function workhorse.begin_wait_v1(
  p_namespace text, p_job_id bigint, p_execution bigint, p_name text, p_kind text,
  p_wake_in_ms bigint, p_wake_at timestamptz, p_key text, p_choices text[], p_prompt text,
  p_children bigint[], p_mode text)
returns table (resolved boolean, outcome text, value jsonb, wake_at timestamptz, started_at timestamptz, resolved_at timestamptz)
language plpgsql as $$
declare
  v_kind text;
  v_missing bigint;
  v_opened boolean;
begin
  -- A replay reaching a wait that already resolved: a fenced read, no lock
  -- (its outcome is fixed; the owner's next write is fenced anyway).
  if exists (select 1 from workhorse.job_waits w
              where w.job_id = p_job_id and w.name = p_name and w.resolved_at is not null and w.kind = p_kind) then
    if not exists (select 1 from workhorse.job_runtime r
                    where r.job_id = p_job_id and r.execution = p_execution and r.namespace = p_namespace) then
      perform workhorse.raise_stale_v1(p_job_id, p_execution);
    end if;
    -- This run waited on it and now sees it resolved: its suspension has
    -- nothing left to find here (see suspend_many_v1). Writes only then.
    update workhorse.job_waits w set pending_execution = null
     where w.job_id = p_job_id and w.name = p_name and w.pending_execution = p_execution;
    return query
    select true, w.outcome, w.value, w.wake_at, w.started_at, w.resolved_at
      from workhorse.job_waits w where w.job_id = p_job_id and w.name = p_name;
    return;
  end if;
  perform workhorse.hold_fence_v1(p_namespace, p_job_id, p_execution);
  if p_kind not in ('sleep', 'signal', 'decision', 'join') then
    raise exception 'begin_wait_v1: unknown wait kind %', p_kind using errcode = 'WH422';
  end if;
  -- A join opened for the first time names children of the joining job:
  -- an id that is no job here would count as ended (the join resolved at
  -- once with no result for it), the job itself never ends while it waits,
  -- and no other job's end wakes it.
  if p_kind = 'join' and not exists (select 1 from workhorse.job_waits w where w.job_id = p_job_id and w.name = p_name) then
    if p_job_id = any(p_children) then
      raise exception 'join "%" of job %: a job cannot join itself', p_name, p_job_id using errcode = 'WH422';
    end if;
    select c.id into v_missing from unnest(p_children) c(id)
     where not exists (select 1 from workhorse.jobs j where j.id = c.id and j.namespace = p_namespace)
     limit 1;
    if v_missing is not null then
      raise exception 'join "%" of job %: job % not found in namespace "%" (join the ids ctx.spawn returned)', p_name, p_job_id, v_missing, p_namespace
        using errcode = 'WH422';
    end if;
    -- Only a child's end wakes its parent (wake_parents_v1): a job that is
    -- not a child of this one would leave the join waiting forever.
    select c.id into v_missing from unnest(p_children) c(id)
     where not exists (select 1 from workhorse.job_children k where k.parent_id = p_job_id and k.child_id = c.id)
     limit 1;
    if v_missing is not null then
      raise exception 'join "%" of job %: job % is not a child of job % (join the ids ctx.spawn returned: the end of a job that is not a child would never wake the join)',
        p_name, p_job_id, v_missing, p_job_id using errcode = 'WH422';
    end if;
  end if;
  -- The wait is open (a resolved one returned above): this run waits on it
  -- (pending_execution), so when something resolves it before the run
  -- suspends, the suspension makes the job ready. A replay's run takes the
  -- mark over.
  insert into workhorse.job_waits (job_id, name, namespace, kind, key, wake_at, choices, prompt, children, mode, pending_execution)
  values (p_job_id, p_name, p_namespace, p_kind, p_key,
          coalesce(p_wake_at, now() + p_wake_in_ms * interval '1 millisecond'),
          p_choices, p_prompt, p_children, p_mode, p_execution)
  on conflict (job_id, name) do nothing;
  v_opened := found;
  if not v_opened then
    update workhorse.job_waits w set pending_execution = p_execution
     where w.job_id = p_job_id and w.name = p_name and w.pending_execution is distinct from p_execution;
  end if;
  -- A decision opened for the first time is a lifecycle event when the
  -- namespace publishes them: people can be told that a job waits for them.
  if v_opened and p_kind = 'decision' and workhorse.publishes_lifecycle_v1(p_namespace, 'decision') then
    insert into workhorse.outbox_events (namespace, topic, key, payload)
    select p_namespace, 'workhorse.job.decision', 'job:' || j.id,
           jsonb_build_object('event', 'decision', 'jobId', j.id::text, 'type', j.type, 'queue', j.queue,
                              'name', p_name, 'choices', to_jsonb(p_choices), 'prompt', p_prompt,
                              'timeoutAt', workhorse.json_time_v1(w.wake_at))
      from workhorse.jobs j, workhorse.job_waits w
     where j.id = p_job_id and w.job_id = p_job_id and w.name = p_name;
    perform pg_notify(workhorse.outbox_channel_v1(p_namespace), '0');
  end if;
  select w.kind into v_kind from workhorse.job_waits w where w.job_id = p_job_id and w.name = p_name;
  if v_kind <> p_kind then
    raise exception 'wait "%" of job % is a % wait, not a % wait', p_name, p_job_id, v_kind, p_kind using errcode = 'WH422';
  end if;
  -- Resolved now: the handler receives the outcome, nothing is pending.
  if workhorse.resolve_wait_v1(p_job_id, p_name) then
    update workhorse.job_waits w set pending_execution = null
     where w.job_id = p_job_id and w.name = p_name and w.pending_execution is not null;
  end if;
  return query
  select w.resolved_at is not null, w.outcome, w.value, w.wake_at, w.started_at, w.resolved_at
    from workhorse.job_waits w where w.job_id = p_job_id and w.name = p_name;
end $$;
comment on function workhorse.begin_wait_v1(text, bigint, bigint, text, text, bigint, timestamptz, text, text[], text, bigint[], text) is
  'Opens wait p_name of a running job under the fence (KEY SHARE on the lease; WH409 when stale; a wait already resolved is a fenced read without a lock), once: a second call (a replay) finds the first. p_kind: sleep (wake at p_wake_at, or p_wake_in_ms after now by the database clock), signal (optionally by p_key), decision (p_choices, p_prompt) or join (p_children, p_mode all | any: children p_job_id spawned, else WH422 when the wait first opens); for the last three the wake time is the timeout (null: none). A decision opened for the first time writes a workhorse.job.decision outbox event when the namespace publishes that lifecycle event. A name used before for another kind is refused with WH422. Then tries to resolve it (resolve_wait_v1). A wait this call leaves open records p_execution as the run waiting on it (pending_execution: suspend_many_v1 readies that run''s job when the wait resolves before it suspends); a wait it returns resolved records none. Returns (resolved, outcome done | timeout | lost (the loser of a race: lose_waits_v1), value, wake_at, started_at, resolved_at): when not resolved, the caller suspends the job (suspend_v1); of several waits opened together and resolved, the one resolved first (resolved_at) is the one a race returns.';

-- Closes waits the running handler went on past without them: the losers
-- of a race it settled with another wait. Such a wait is resolved with
-- outcome lost, so nothing that arrives later resolves it (a signal to it
-- is refused, a decision for it too, a key's signal goes elsewhere) and a
-- replay of the race ends it the same way: the winner, recorded, wins
-- again. A loser that a decision or a child's end resolved after this run
-- opened it, and that this run never read, is closed too: the handler went
-- on without that outcome.
create function workhorse.lose_waits_v1(p_namespace text, p_job_id bigint, p_execution bigint, p_names text[])
returns integer language plpgsql as $$
declare
  v_lost integer;
begin
  perform workhorse.hold_fence_v1(p_namespace, p_job_id, p_execution);
  update workhorse.job_waits w
     set resolved_at = coalesce(w.resolved_at, now()), outcome = 'lost', pending_execution = null
   where w.job_id = p_job_id and w.name = any(p_names)
     and (w.resolved_at is null or w.pending_execution = p_execution);
  get diagnostics v_lost = row_count;
  return v_lost;
end $$;
comment on function workhorse.lose_waits_v1(text, bigint, bigint, text[]) is
  'Closes the named waits of a running job that its handler went on past (the losers of a race another wait won), under the fence (WH409 when stale): each still open, or resolved since this execution left it open without reading it, gets outcome lost. A lost wait is resolved: signals and decisions for it are refused, suspend_many_v1 and signal_key_v1 pass it by, and begin_wait_v1 returns it as (resolved, lost) on every replay. Returns how many it closed.';

-- Makes a waiting job ready now and wakes its queue. Callers hold its row.
create function workhorse.wake_job_v1(p_job_id bigint)
returns boolean language plpgsql as $$
declare
  v_namespace text;
  v_queue text;
begin
  update workhorse.jobs j set status = 'ready', run_at = now(), updated_at = now()
   where j.id = p_job_id and j.status = 'waiting'
  returning j.namespace, j.queue into v_namespace, v_queue;
  if not found then return false; end if;
  perform workhorse.notify_wake_v1(v_namespace, v_queue, 0);
  return true;
end $$;
comment on function workhorse.wake_job_v1(bigint) is
  'Makes a waiting job ready now and sends its queue a wake hint (notify_wake_v1, due now). Returns false when the job was not waiting. The caller holds the job row (FOR NO KEY UPDATE or stronger).';

-- Suspends a batch of running jobs, each on its open wait, in one
-- statement (the settler's group commit). Each job in job-id order: its
-- lease is locked first (the fence: a lease gone or at another execution is
-- skipped, nothing written for it), then its row, the lease deleted last
-- (the order every function that ends a lease keeps: see complete_many_v1).
create function workhorse.suspend_many_v1(
  p_namespace text, p_job_ids bigint[], p_executions bigint[], p_waits text[])
returns table (id bigint, status text, run_at timestamptz) language plpgsql as $$
#variable_conflict use_column
declare
  v_item record;
  v_lease workhorse.job_runtime;
  v_queue text;
  v_resolved boolean;
  v_name text;
  v_wake timestamptz;
  v_status text;
  v_run_at timestamptz;
  v_queues text[] := '{}';
  v_due_ms bigint[] := '{}';
  v_due bigint;
  v_i integer;
begin
  perform workhorse.check_lengths_v1('suspend_many_v1', cardinality(p_job_ids), cardinality(p_executions), cardinality(p_waits));
  for v_item in
    select t.job_id, t.execution, t.wait from unnest(p_job_ids, p_executions, p_waits) as t(job_id, execution, wait) order by t.job_id
  loop
    select * into v_lease from workhorse.job_runtime r
     where r.job_id = v_item.job_id and r.execution = v_item.execution and r.namespace = p_namespace
     for update;
    continue when not found;
    -- Only a wait begin_wait_v1 opened can suspend a job (one without is
    -- skipped like a stale one, so it cannot fail the rest of the batch).
    continue when not exists (select 1 from workhorse.job_waits w where w.job_id = v_item.job_id and w.name = v_item.wait);
    select j.queue into v_queue from workhorse.jobs j where j.id = v_item.job_id for update;
    -- What arrived since the wait opened (a signal, a decision, a child's
    -- end) is found here: senders lock the job row, so one of us sees the other.
    v_resolved := workhorse.resolve_wait_v1(v_item.job_id, v_item.wait);
    -- The handler may have opened other waits beside it (Promise.race of a
    -- signal and a sleep, Promise.all of two signals): any of them that can
    -- resolve now makes the job ready, and the job is due at the earliest
    -- wake time among those still open, so a timer raced against a wait
    -- without one still fires.
    for v_name in select w.name from workhorse.job_waits w
                   where w.job_id = v_item.job_id and w.resolved_at is null and w.name <> v_item.wait
                   order by w.name loop
      v_resolved := workhorse.resolve_wait_v1(v_item.job_id, v_name) or v_resolved;
    end loop;
    -- A decision or a child's end that resolved one of those waits while
    -- this run still held its lease did not wake the job (it was not
    -- waiting): the wait is resolved already, so the loop above skips it.
    -- This run left it open and never read it resolved (pending_execution
    -- is its execution), so the handler has an outcome to read: ready.
    v_resolved := v_resolved or exists (
      select 1 from workhorse.job_waits w
       where w.job_id = v_item.job_id and w.pending_execution = v_item.execution and w.resolved_at is not null);
    select min(w.wake_at) into v_wake from workhorse.job_waits w
     where w.job_id = v_item.job_id and w.resolved_at is null;
    v_status := case when v_resolved then 'ready' else 'waiting' end;
    v_run_at := case when v_resolved then now() else coalesce(v_wake, workhorse.never_v1()) end;
    -- The attempt stays as stored: a wake-up is not an attempt.
    update workhorse.jobs j
       set status = v_status, run_at = v_run_at, execution = v_lease.execution,
           started_at = v_lease.claimed_at, last_worker = v_lease.worker_id, updated_at = now()
     where j.id = v_item.job_id;
    delete from workhorse.job_gates g where g.namespace = p_namespace and g.job_id = v_item.job_id;
    delete from workhorse.job_runtime r where r.job_id = v_item.job_id and r.execution = v_item.execution;
    -- Idle workers learn when it comes due (or that it is due now): one hint
    -- per queue, with the earliest due time of the batch.
    v_due := case when v_resolved then 0
                  when v_wake is null then null
                  else ceil(greatest(0, date_part('epoch', v_wake - now()) * 1000))::bigint end;
    if v_due is not null then
      v_i := array_position(v_queues, v_queue);
      if v_i is null then
        v_queues := v_queues || v_queue;
        v_due_ms := v_due_ms || v_due;
      elsif v_due < v_due_ms[v_i] then
        v_due_ms[v_i] := v_due;
      end if;
    end if;
    return query select v_item.job_id, v_status, v_run_at;
  end loop;
  perform workhorse.notify_wake_v1(p_namespace, u.q, u.d) from unnest(v_queues, v_due_ms) as u(q, d);
end $$;
comment on function workhorse.suspend_many_v1(text, bigint[], bigint[], text[]) is
  'Suspends a batch of running jobs, each on its open wait p_waits[i], under the fence: for each (in job-id order) whose lease (job id, execution) still exists it locks the lease, then the job row; resolves the wait, and every other open wait of the job (a handler may open several at once), if what it waits for arrived meanwhile; writes the row waiting until the earliest wake time among its open waits (never_v1() without one), or ready now when one of them resolved, or when a wait this execution left open (pending_execution) was resolved since by someone else (a decision, a child''s end: they cannot wake a job that is not waiting yet), with the lease''s execution and the attempt left as it was (a wake-up is not an attempt); releases the gate; deletes the lease last. Then wakes each queue once with the time until its earliest suspended job is due. Returns (id, status waiting | ready, run_at) for the accepted ones; an id missing was refused by the fence (or has no such open wait: nothing written for it). WH422 for arrays of different lengths.';

create function workhorse.suspend_v1(p_namespace text, p_job_id bigint, p_execution bigint, p_wait text)
returns table (status text, run_at timestamptz) language plpgsql as $$
#variable_conflict use_column
begin
  return query select s.status, s.run_at
    from workhorse.suspend_many_v1(p_namespace, array[p_job_id], array[p_execution], array[p_wait]) s;
  if not found then perform workhorse.raise_stale_v1(p_job_id, p_execution); end if;
end $$;
comment on function workhorse.suspend_v1(text, bigint, bigint, text) is
  'The single-job form of suspend_many_v1: returns (status, run_at), or raises WH409 (nothing written) when the lease (job id, execution) is gone.';

-- The claim's promotion: waiting jobs whose wake time passed become ready
-- (keeping run_at, their wake time, so they run before newer jobs). What
-- they waited for is resolved when the replayed handler reaches the wait.
create function workhorse.promote_due_v1(p_namespace text, p_queue text, p_limit integer)
returns integer language plpgsql as $$
declare
  v_promoted integer;
begin
  with due as (
    select j.id from workhorse.jobs j
     where j.namespace = p_namespace and j.queue = p_queue and j.status = 'waiting' and j.run_at <= now()
     order by j.run_at
     limit p_limit
       for update skip locked
  )
  update workhorse.jobs j set status = 'ready', updated_at = now() from due where j.id = due.id;
  get diagnostics v_promoted = row_count;
  return v_promoted;
end $$;
comment on function workhorse.promote_due_v1(text, text, integer) is
  'Makes up to p_limit waiting jobs of the queue whose run_at (wake time or timeout) has passed ready, keeping run_at; skips rows others hold. Walks the waiting index (namespace, queue, run_at). Returns how many it promoted. The claim calls it for each queue it looks at.';

create function workhorse.current_wait_v1(p_namespace text, p_job_id bigint)
returns setof workhorse.job_waits language sql stable as $$
  select w.* from workhorse.job_waits w
   where w.job_id = p_job_id and w.namespace = p_namespace and w.resolved_at is null
   order by w.started_at desc limit 1
$$;
comment on function workhorse.current_wait_v1(text, bigint) is
  'The open wait of the job (the newest one not resolved), or no row: what a waiting job waits for and since when.';

create function workhorse.open_waits_v1(p_namespace text, p_job_id bigint)
returns setof workhorse.job_waits language sql stable as $$
  select w.* from workhorse.job_waits w
   where w.job_id = p_job_id and w.namespace = p_namespace and w.resolved_at is null
   order by w.started_at desc, w.name
$$;
comment on function workhorse.open_waits_v1(text, bigint) is
  'Every open wait of the job, newest first (the first is current_wait_v1''s): a job suspended on waits opened together (Promise.race of a decision and a sleep, Promise.all of two signals) waits for each of them.';

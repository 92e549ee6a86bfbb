-- outbox: the transactional outbox behind client.publish and the sys.outbox
-- slot. publish_v1 writes an event in the caller's transaction and sends a
-- wake hint on the namespace's outbox channel (NOTIFY is delivered at
-- commit, so a listening deliverer only ever hears of committed events).
-- A deliverer leases a batch with outbox_lease_v1, delivers it (per key in
-- id order, stopping a key at its first failure) and records the outcome
-- with outbox_settle_v1, which writes only rows it still holds: a deliverer
-- whose lease expired and was taken over changes nothing. A deliverer that
-- dies leaves its events pending; they are leased again when its lease
-- expires.

-- The outbox wake channel: the wake channel of the pseudo-queue '#outbox'
-- (a queue name never holds '#', so it meets no real queue's channel).
create function workhorse.outbox_channel_v1(p_namespace text)
returns text language sql immutable parallel safe as $$
  select workhorse.wake_channel_v1(p_namespace, '#outbox')
$$;
comment on function workhorse.outbox_channel_v1(text) is
  'The NOTIFY channel on which publish_v1 announces new outbox events of the namespace: wake_channel_v1(namespace, ''#outbox''). Payload: ms until the earliest announced event is due (0 = now).';

-- The first half of a keyed publish's advisory lock (the second is the
-- hash of namespace and key): see publish_v1 and outbox_lease_v1.
create function workhorse.outbox_key_mark_v1()
returns integer language sql immutable parallel safe as $$ select 7700012 $$;
comment on function workhorse.outbox_key_mark_v1() is
  'The first key of the advisory lock a keyed publish_v1 holds, shared, until its transaction ends (the second: hashtext(namespace || '':'' || key)). outbox_lease_v1 leaves out keys whose lock some other session holds.';

-- The first half of the advisory lock deliverers take, one namespace at a
-- time, while they lease (the second: the namespace's hash).
create function workhorse.outbox_lease_lock_v1()
returns integer language sql immutable parallel safe as $$ select 7700013 $$;
comment on function workhorse.outbox_lease_lock_v1() is
  'The first key of the transaction-scoped advisory lock outbox_lease_v1 takes (the second: hashtext(namespace)), so deliverers of a namespace lease one at a time.';

create function workhorse.publish_v1(
  p_namespace text, p_topic text, p_key text, p_payload jsonb, p_delay_ms bigint default 0)
returns bigint language plpgsql as $$
declare
  v_id bigint;
begin
  perform workhorse.check_namespace_v1(p_namespace);
  if p_topic is null or p_topic !~ '^[A-Za-z0-9_.:/-]{1,200}$' then
    raise exception 'invalid topic %: 1-200 characters of letters, digits, "_", ".", ":", "/" or "-"', coalesce(p_topic, 'null')
      using errcode = 'WH422';
  end if;
  if p_key is not null and (octet_length(p_key) = 0 or octet_length(p_key) > 500) then
    raise exception 'invalid outbox key: 1-500 bytes' using errcode = 'WH422';
  end if;
  -- The key's publish mark, held until this transaction ends and taken
  -- before the id is drawn: while it is held, outbox_lease_v1 sends no event
  -- of the key, since this one may hold an earlier id, invisible until it
  -- commits. Shared: publishers of a key never wait for each other, and no
  -- deliverer takes it (they only look for it in pg_locks).
  if p_key is not null then
    perform pg_advisory_xact_lock_shared(workhorse.outbox_key_mark_v1(), hashtext(p_namespace || ':' || p_key));
  end if;
  insert into workhorse.outbox_events (namespace, topic, key, payload, available_at)
  values (p_namespace, p_topic, p_key, coalesce(p_payload, 'null'::jsonb),
          now() + greatest(coalesce(p_delay_ms, 0), 0) * interval '1 millisecond')
  returning id into v_id;
  perform pg_notify(workhorse.outbox_channel_v1(p_namespace), greatest(coalesce(p_delay_ms, 0), 0)::text)
   where coalesce(p_delay_ms, 0) <= workhorse.wake_horizon_ms_v1();
  return v_id;
end $$;
comment on function workhorse.publish_v1(text, text, text, jsonb, bigint) is
  'Writes one outbox event (topic: 1-200 of [A-Za-z0-9_.:/-]; key: null or 1-500 bytes, events of one key are delivered in id order, a later one waiting while a publish of its key is in flight (the key''s mark, see outbox_key_mark_v1); payload jsonb; available after p_delay_ms) in the caller''s transaction, and sends a hint on outbox_channel_v1 (delivered at commit). Refuses a bad namespace, topic or key with WH422. Returns the event id.';

create function workhorse.outbox_lease_v1(p_namespace text, p_owner text, p_limit integer, p_lease_ms integer)
returns table (id bigint, topic text, key text, payload jsonb, attempts integer, created_at timestamptz)
language plpgsql as $$
#variable_conflict use_column
declare
  v_ids bigint[];
  v_keys text[];
  v_marked oid[];
begin
  -- Deliverers of a namespace lease one at a time (each lease is an
  -- instant), so SKIP LOCKED below only ever skips rows a session other
  -- than a deliverer holds (an operator's statement, a transaction of the
  -- application's), never a row another lease is taking: that skip left out
  -- the rest of its key, and a lease came back empty while events were due.
  perform pg_advisory_xact_lock(workhorse.outbox_lease_lock_v1(), hashtext(p_namespace));
  -- The outbox is one of the sys slots' duties: pausing the sys queue holds
  -- delivery, the deliverers' after-commit passes too (resuming it wakes them).
  if exists (select 1 from workhorse.queues q where q.namespace = p_namespace and q.name = 'sys' and q.paused) then
    return;
  end if;
  -- Keys with a publish in flight now (their mark held: publish_v1) are
  -- left out before the batch is cut, as are events whose key has an
  -- earlier event that cannot go yet (its backoff or delay runs, another
  -- deliverer holds it): a batch full of held-back events would have come
  -- back empty and ended the pass, every other key waiting.
  select coalesce(array_agg(l.objid), '{}') into v_marked
    from pg_locks l
   where l.locktype = 'advisory' and l.database = (select d.oid from pg_database d where d.datname = current_database())
     and l.classid = workhorse.outbox_key_mark_v1()::oid and l.objsubid = 2
     and l.pid is distinct from pg_backend_pid();
  select coalesce(array_agg(c.id order by c.id), '{}'), coalesce(array_agg(distinct c.key) filter (where c.key is not null), '{}')
    into v_ids, v_keys
    from (select e.id, e.key from workhorse.outbox_events e
           where e.namespace = p_namespace and e.state = 'pending' and e.available_at <= now()
             and (e.leased_until is null or e.leased_until < now())
             and (e.key is null or (
                  hashtext(p_namespace || ':' || e.key)::oid <> all(v_marked)
                  and not exists (
                    select 1 from workhorse.outbox_events p
                     where p.namespace = p_namespace and p.key = e.key and p.state = 'pending' and p.id < e.id
                       and (p.available_at > now() or p.leased_until >= now()))))
           order by e.id
           limit greatest(p_limit, 0)
           for update of e skip locked) c;
  if cardinality(v_ids) = 0 then
    return;
  end if;
  -- A key with a publish in flight (publish_v1 holds its mark until commit)
  -- waits: that publish may hold an earlier id than the candidates. One that
  -- starts after this look draws a later id than every candidate (the look
  -- before the candidates was a shortcut; this one, after them, is the rule).
  if cardinality(v_keys) > 0 then
    select coalesce(array_agg(k.key), '{}') into v_keys
      from unnest(v_keys) k(key)
     where not exists (
       select 1 from pg_locks l
        where l.locktype = 'advisory' and l.database = (select d.oid from pg_database d where d.datname = current_database())
          and l.classid = workhorse.outbox_key_mark_v1()::oid
          and l.objid = hashtext(p_namespace || ':' || k.key)::oid and l.objsubid = 2
          and l.pid is distinct from pg_backend_pid());
  end if;
  -- A new statement, so a fresh snapshot: every publish that was in flight
  -- when the candidates were read and has ended since is seen now. An event
  -- goes out only after every earlier pending event of its key: those must
  -- be in this batch (it delivers them first, in order).
  return query
  with ok as (
    select c.id from workhorse.outbox_events c
     where c.id = any(v_ids)
       and (c.key is null or (c.key = any(v_keys) and not exists (
         select 1 from workhorse.outbox_events p
          where p.namespace = p_namespace and p.key = c.key and p.state = 'pending' and p.id < c.id
            and p.id <> all(v_ids))))
  )
  update workhorse.outbox_events e
     set leased_by = p_owner, leased_until = now() + greatest(p_lease_ms, 1000) * interval '1 millisecond'
    from ok where e.id = ok.id
  returning e.id, e.topic, e.key, e.payload, e.attempts, e.created_at;
end $$;
comment on function workhorse.outbox_lease_v1(text, text, integer, integer) is
  'Leases to p_owner for p_lease_ms (at least 1 s) up to p_limit due pending events, oldest first (none while the namespace''s sys queue is paused), one deliverer of the namespace at a time (outbox_lease_lock_v1), skipping rows other sessions lock, passing over events others hold, leaving out the keys another session is publishing on (its publish_v1 mark is held), events whose key has an earlier event that cannot go yet (backoff, delay, leased), and an event while an earlier pending event of its key is not in the batch. Returns them (the caller sorts by id to keep per-key order).';

-- When a deliverer that found nothing to lease should look again: the
-- soonest pending event that is not leasable yet (its backoff or delay runs,
-- or another deliverer's lease on it ends). Events due now but held back
-- (an earlier event of their key is leased or in backoff, a publish of their
-- key is in flight) are left out: whatever holds them back wakes a pass.
create function workhorse.outbox_next_due_ms_v1(p_namespace text)
returns bigint language sql stable as $$
  select ceil(extract(epoch from min(t.at) - now()) * 1000)::bigint
    from (select greatest(e.available_at, coalesce(e.leased_until, e.available_at)) as at
            from workhorse.outbox_events e
           where e.namespace = p_namespace and e.state = 'pending') t
   where t.at > now()
$$;
comment on function workhorse.outbox_next_due_ms_v1(text) is
  'Milliseconds until the soonest pending event of the namespace that is not leasable now (backoff, delay, or another deliverer''s lease) becomes leasable; null when there is none.';

create function workhorse.outbox_settle_v1(
  p_namespace text, p_owner text, p_delivered bigint[], p_failed bigint[], p_errors jsonb,
  p_released bigint[], p_max_attempts integer, p_base_ms integer, p_max_ms integer)
returns table (delivered integer, retried integer, dead integer) language plpgsql as $$
#variable_conflict use_column
declare
  v_delivered integer;
  v_retried integer;
  v_dead integer;
  v_released integer;
  v_unblocked boolean;
  v_retry_at timestamptz;
begin
  perform workhorse.check_lengths_v1('outbox_settle_v1 failed/errors', cardinality(p_failed), jsonb_array_length(coalesce(p_errors, '[]'::jsonb)));
  with done as (
    update workhorse.outbox_events e
       set state = 'delivered', delivered_at = now(), attempts = e.attempts + 1, leased_by = null, leased_until = null
     where e.namespace = p_namespace and e.id = any(p_delivered) and e.leased_by = p_owner and e.state = 'pending'
    returning e.id, e.key
  )
  select count(*),
         -- A delivered event that held back later events of its key (recorded while its batch's other keys still run).
         bool_or(done.key is not null and exists (
           select 1 from workhorse.outbox_events p
            where p.namespace = p_namespace and p.key = done.key and p.state = 'pending' and p.id > done.id and p.leased_by is null))
    into v_delivered, v_unblocked from done;

  with f as (
    select u.id, u.ord, p_errors -> (u.ord::integer - 1) as err
      from unnest(p_failed) with ordinality u(id, ord)
  ), upd as (
    update workhorse.outbox_events e
       set attempts = e.attempts + 1,
           state = case when e.attempts + 1 >= p_max_attempts then 'dead' else 'pending' end,
           -- The backoff, or the Retry-After the sink asked for (the error's retryAfterMs) when longer; at most p_max_ms.
           available_at = now() + least(p_max_ms::double precision,
                                        greatest(p_base_ms * power(2::double precision, least(e.attempts, 30)),
                                                 case when jsonb_typeof(f.err -> 'retryAfterMs') = 'number'
                                                      then (f.err ->> 'retryAfterMs')::double precision else 0 end)) * interval '1 millisecond',
           last_error = f.err, leased_by = null, leased_until = null
      from f
     where e.namespace = p_namespace and e.id = f.id and e.leased_by = p_owner and e.state = 'pending'
    returning e.state, e.available_at
  )
  select count(*) filter (where upd.state = 'pending'), count(*) filter (where upd.state = 'dead'),
         min(upd.available_at) filter (where upd.state = 'pending')
    into v_retried, v_dead, v_retry_at from upd;

  update workhorse.outbox_events e set leased_by = null, leased_until = null
   where e.namespace = p_namespace and e.id = any(p_released) and e.leased_by = p_owner and e.state = 'pending';
  get diagnostics v_released = row_count;
  -- Whoever delivers next (a pump of any worker, or the next sys.outbox job)
  -- is told when the retries come due, and that released events wait now.
  if v_released > 0 or coalesce(v_unblocked, false) then
    perform pg_notify(workhorse.outbox_channel_v1(p_namespace), '0');
  elsif v_retry_at is not null then
    perform pg_notify(workhorse.outbox_channel_v1(p_namespace),
                      greatest(0, ceil(date_part('epoch', v_retry_at - now()) * 1000))::bigint::text);
  end if;
  return query select v_delivered, v_retried, v_dead;
end $$;
comment on function workhorse.outbox_settle_v1(text, text, bigint[], bigint[], jsonb, bigint[], integer, integer, integer) is
  'Records a delivery batch of p_owner: p_delivered become delivered; p_failed (with p_errors, a JSON array in the same order) count an attempt and are available again after least(p_max_ms, greatest(p_base_ms * 2^(attempts before), the error''s retryAfterMs when it is a number)) ms, or dead once attempts reach p_max_attempts; p_released go back untouched. Writes only rows p_owner still leases (a deliverer whose lease was taken over changes nothing). Notifies the outbox channel at commit: 0 when it released events, else the ms until the earliest retry is due, so the next deliverer (a pump on any worker) retries on time instead of at the sys.outbox cadence. Returns the counts written.';

-- A deliverer whose lease call failed on a fault (the lease may have
-- committed with its answer lost), or whose settlement could not be
-- written, gives back whatever its owner id still holds, so those events
-- go out again now rather than when the lease ends. Each pass leases under
-- a fresh owner id and calls this only when none of its deliveries is in
-- flight, so nothing it releases is being delivered. Repeating it is safe.
create function workhorse.outbox_release_v1(p_namespace text, p_owner text)
returns integer language plpgsql as $$
declare
  v_released integer;
begin
  update workhorse.outbox_events e set leased_by = null, leased_until = null
   where e.namespace = p_namespace and e.leased_by = p_owner and e.state = 'pending';
  get diagnostics v_released = row_count;
  if v_released > 0 then
    perform pg_notify(workhorse.outbox_channel_v1(p_namespace), '0');
  end if;
  return v_released;
end $$;
comment on function workhorse.outbox_release_v1(text, text) is
  'Releases every pending event of the namespace that p_owner leases (clears leased_by and leased_until; delivered, dead and others'' events are untouched), so they can be leased again at once, and wakes the deliverers when it released any. For a deliverer whose outbox_lease_v1 answer was lost or whose outbox_settle_v1 could not be written; safe to repeat. Returns how many it released.';

create function workhorse.list_outbox_v1(p_namespace text, p_state text, p_topic text, p_limit integer, p_before_id bigint)
returns table (id bigint, topic text, key text, payload jsonb, state text, attempts integer, available_at timestamptz,
               leased_until timestamptz, last_error jsonb, created_at timestamptz, delivered_at timestamptz)
language plpgsql stable as $$
#variable_conflict use_column
begin
  if p_state is not null and p_state not in ('pending', 'delivered', 'dead') then
    raise exception 'invalid outbox state %', p_state using errcode = '22023';
  end if;
  return query
  select e.id, e.topic, e.key, e.payload, e.state, e.attempts, e.available_at, e.leased_until, e.last_error, e.created_at, e.delivered_at
    from workhorse.outbox_events e
   where e.namespace = p_namespace and (p_state is null or e.state = p_state)
     and (p_topic is null or e.topic = p_topic) and (p_before_id is null or e.id < p_before_id)
   order by e.id desc
   limit least(greatest(p_limit, 1), 500);
end $$;
comment on function workhorse.list_outbox_v1(text, text, text, integer, bigint) is
  'Outbox events of the namespace, newest first, filtered by state (pending | delivered | dead) and topic when not null, below p_before_id, at most p_limit (1..500). Refuses an unknown state with 22023.';

create function workhorse.retry_outbox_v1(p_namespace text, p_ids bigint[])
returns setof bigint language plpgsql as $$
begin
  return query
  with upd as (
    update workhorse.outbox_events e
       set state = 'pending', attempts = 0, available_at = now(), leased_by = null, leased_until = null
     where e.namespace = p_namespace and e.id = any(p_ids) and e.state in ('dead', 'pending')
       and (e.leased_until is null or e.leased_until < now())
    returning e.id
  ) select upd.id from upd;
  if found then perform pg_notify(workhorse.outbox_channel_v1(p_namespace), '0'); end if;
end $$;
comment on function workhorse.retry_outbox_v1(text, bigint[]) is
  'Makes dead (or waiting, not leased) events pending again with a fresh attempt budget, due now, and wakes the deliverers. Returns the ids changed; a delivered, leased or unknown id is left out.';

create function workhorse.discard_outbox_v1(p_namespace text, p_ids bigint[])
returns setof bigint language plpgsql as $$
begin
  return query
  delete from workhorse.outbox_events e
   where e.namespace = p_namespace and e.id = any(p_ids) and e.state in ('dead', 'pending')
     and (e.leased_until is null or e.leased_until < now())
  returning e.id;
  -- A discarded pending event may have held back later events of its key: wake the deliverers.
  if found then perform pg_notify(workhorse.outbox_channel_v1(p_namespace), '0'); end if;
end $$;
comment on function workhorse.discard_outbox_v1(text, bigint[]) is
  'Deletes dead or pending (not leased) events: they are never delivered, and wakes the deliverers (a discarded event may have held back its key). Returns the ids deleted; a delivered, leased or unknown id is left out.';

create function workhorse.purge_outbox_v1(p_namespace text, p_older_than_ms bigint, p_limit integer)
returns integer language sql as $$
  with doomed as (
    select e.id from workhorse.outbox_events e
     where e.namespace = p_namespace and e.state = 'delivered'
       and e.delivered_at < now() - p_older_than_ms * interval '1 millisecond'
     order by e.id limit p_limit for update skip locked
  ), gone as (delete from workhorse.outbox_events e using doomed d where e.id = d.id returning 1)
  select count(*)::integer from gone
$$;
comment on function workhorse.purge_outbox_v1(text, bigint, integer) is
  'Deletes up to p_limit delivered events delivered more than p_older_than_ms ago. Returns how many.';

create function workhorse.set_outbox_lifecycle_v1(p_namespace text, p_events text[])
returns void language plpgsql as $$
begin
  perform workhorse.check_namespace_v1(p_namespace);
  if exists (select 1 from unnest(coalesce(p_events, '{}')) e where e not in ('succeeded', 'failed', 'dead', 'decision', 'cancelled')) then
    raise exception 'invalid lifecycle events %: each is succeeded, failed, dead, decision or cancelled', p_events using errcode = 'WH422';
  end if;
  insert into workhorse.outbox_lifecycle (namespace, events) values (p_namespace, coalesce(p_events, '{}'))
  on conflict (namespace) do update set events = excluded.events, updated_at = now()
   where workhorse.outbox_lifecycle.events is distinct from excluded.events;
end $$;
comment on function workhorse.set_outbox_lifecycle_v1(text, text[]) is
  'Sets which job lifecycle events the namespace publishes through the outbox on settlement: any of succeeded (topic workhorse.job.succeeded), failed (an attempt failed and will be retried: workhorse.job.failed), dead (failed for good: workhorse.job.dead), decision (a job opened a wait for a human decision: workhorse.job.decision, written by begin_wait_v1), cancelled (an operator cancelled a job that had not ended: workhorse.job.cancelled, written by cancel_job_v1); an empty array publishes none. Refuses anything else with WH422.';

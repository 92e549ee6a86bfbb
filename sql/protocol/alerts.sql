-- alerts: the rules the sys.alerts slot evaluates from the database each
-- cadence, and the open/resolved ledger of what they found. Each rule is
-- one query over the state the protocol already keeps; its thresholds come
-- in a JSON object (a rule absent from it is not evaluated). An alert opens
-- once per (rule, key), stays open while the condition holds and resolves
-- when it clears; each opening and resolution is published on the outbox
-- topic workhorse.alert in the same transaction.

create function workhorse.alert_conditions_v1(p_namespace text, p_rules jsonb)
returns table (rule text, key text, details jsonb) language plpgsql stable as $$
#variable_conflict use_column
declare
  r jsonb;
begin
  -- backlog and oldest_ready: due jobs waiting for a claim, per unpaused queue: ready ones without a
  -- lease (a leased job is running), and waiting ones whose wake time or timeout has passed (the next
  -- claim of their queue promotes them; with no claimer, they were counted nowhere).
  if p_rules ? 'backlog' or p_rules ? 'oldest_ready' then
    return query
    with due as (
      select j.queue, j.run_at from workhorse.jobs j
       where j.namespace = p_namespace and j.status = 'ready' and j.run_at <= now()
         and not exists (select 1 from workhorse.job_runtime l where l.job_id = j.id)
      union all
      select j.queue, j.run_at from workhorse.jobs j
       where j.namespace = p_namespace and j.status = 'waiting' and j.run_at <= now()
    ), ready as (
      select d.queue, count(*) as n, min(d.run_at) as oldest
        from due d
       where not exists (select 1 from workhorse.queues q where q.namespace = p_namespace and q.name = d.queue and q.paused)
       group by d.queue
    )
    select 'backlog'::text, q.queue, jsonb_build_object('queue', q.queue, 'ready', q.n, 'max', (p_rules->'backlog'->>'max')::bigint)
      from ready q where p_rules ? 'backlog' and q.n > (p_rules->'backlog'->>'max')::bigint
    union all
    select 'oldest_ready'::text, q.queue,
           jsonb_build_object('queue', q.queue, 'ageMs', floor(extract(epoch from now() - q.oldest) * 1000)::bigint,
                              'maxAgeMs', (p_rules->'oldest_ready'->>'maxAgeMs')::bigint)
      from ready q where p_rules ? 'oldest_ready'
       and q.oldest < now() - (p_rules->'oldest_ready'->>'maxAgeMs')::bigint * interval '1 millisecond';
  end if;

  -- failure_rate: failed attempts (failed, retried, recovered) against successes in the window, per type.
  r := p_rules->'failure_rate';
  if r is not null then
    return query
    with f as (
      select j.type, count(*) as n from workhorse.job_attempts a join workhorse.jobs j on j.id = a.job_id
       where a.namespace = p_namespace and a.finished_at > now() - (r->>'windowMs')::bigint * interval '1 millisecond'
         and a.outcome in ('failed', 'retried', 'recovered')
       group by j.type
    ), s as (
      select j.type, count(*) as n from workhorse.jobs j
       where j.namespace = p_namespace and j.status = 'succeeded'
         and j.finished_at > now() - (r->>'windowMs')::bigint * interval '1 millisecond'
       group by j.type
    )
    select 'failure_rate'::text, f.type,
           jsonb_build_object('type', f.type, 'failures', f.n, 'successes', coalesce(s.n, 0),
                              'rate', round(f.n::numeric / (f.n + coalesce(s.n, 0)), 4), 'maxRate', (r->>'maxRate')::numeric,
                              'windowMs', (r->>'windowMs')::bigint)
      from f left join s on s.type = f.type
     where f.n >= (r->>'minFailures')::bigint and f.n::numeric / (f.n + coalesce(s.n, 0)) > (r->>'maxRate')::numeric;
  end if;

  -- dead_worker: a registered worker silent for this many of its heartbeats (a clean stop deregisters).
  -- A heartbeat counts as missed half a heartbeat after it was due: beats
  -- come a little later than every heartbeat_ms (each is timed from the
  -- previous one's end), so with no slack a live worker with a threshold of
  -- 1 opened and resolved alerts.
  -- blindBeganMsAgo/blindEndedMsAgo (given by an evaluator that could not
  -- see the database for that spell: an outage, a stall): silence within
  -- that spell is not counted, so after a fleet-wide outage, when every
  -- worker looks silent until its next beat (each opened and resolved an
  -- alert), only the silence since is. An alert already open stays open.
  r := p_rules->'dead_worker';
  if r is not null then
    return query
    select 'dead_worker'::text, w.id,
           jsonb_build_object('workerId', w.id, 'kind', w.kind, 'build', w.build, 'state', w.state,
                              'silentMs', floor(s.ago)::bigint, 'heartbeatMs', w.heartbeat_ms)
      from workhorse.worker_registry w
     cross join lateral (select extract(epoch from now() - w.last_seen) * 1000 as ago,
                                ((r->>'missedHeartbeats')::integer + 0.5) * w.heartbeat_ms as threshold) s
     where w.namespace = p_namespace
       and (w.state = 'dead' or s.ago > s.threshold)
       -- A worker's schedule runner and system worker (<id>:schedules, <id>:schedules:sys) die with it: its
       -- own alert says so, and one SIGKILL opened two or three.
       and not exists (select 1 from workhorse.worker_registry p
                        where p.namespace = w.namespace and w.id in (p.id || ':schedules', p.id || ':schedules:sys')
                          and (p.state = 'dead'
                               or extract(epoch from now() - p.last_seen) * 1000 > ((r->>'missedHeartbeats')::integer + 0.5) * p.heartbeat_ms))
       and (r->>'blindBeganMsAgo' is null
            or s.ago - greatest(0, least((r->>'blindBeganMsAgo')::numeric, s.ago) - (r->>'blindEndedMsAgo')::numeric) > s.threshold
            or exists (select 1 from workhorse.alerts a
                        where a.namespace = p_namespace and a.rule = 'dead_worker' and a.key = w.id and a.state = 'open'));
  end if;

  -- unhandled_type: jobs due for a while whose (queue, type) no live worker claims: ready ones without
  -- a lease, and waiting ones whose wake time or timeout passed (a claim would promote them).
  r := p_rules->'unhandled_type';
  if r is not null then
    return query
    with due as (
      select j.queue, j.type, j.run_at from workhorse.jobs j
       where j.namespace = p_namespace and j.status = 'ready'
         and j.run_at < now() - (r->>'minAgeMs')::bigint * interval '1 millisecond'
         and not exists (select 1 from workhorse.job_runtime l where l.job_id = j.id)
      union all
      select j.queue, j.type, j.run_at from workhorse.jobs j
       where j.namespace = p_namespace and j.status = 'waiting'
         and j.run_at < now() - (r->>'minAgeMs')::bigint * interval '1 millisecond'
    ), pending as (
      select d.queue, d.type, count(*) as n, min(d.run_at) as oldest from due d group by d.queue, d.type
    )
    select 'unhandled_type'::text, p.type || '@' || p.queue,
           jsonb_build_object('type', p.type, 'queue', p.queue, 'ready', p.n,
                              'oldestAgeMs', floor(extract(epoch from now() - p.oldest) * 1000)::bigint)
      from pending p
     where not exists (
       select 1 from workhorse.worker_registry w
        where w.namespace = p_namespace and w.state = 'active'
          and w.last_seen > now() - 7 * w.heartbeat_ms * interval '1 millisecond'
          and p.queue = any(w.queues) and p.type = any(w.types));
  end if;

  -- stuck_lease: leases expired for longer than the grace that no recovery pass took back.
  r := p_rules->'stuck_lease';
  if r is not null then
    return query
    select 'stuck_lease'::text, l.job_id::text,
           jsonb_build_object('jobId', l.job_id::text, 'workerId', l.worker_id, 'queue', l.queue,
                              'expiredMs', floor(extract(epoch from now() - l.expires_at) * 1000)::bigint)
      from workhorse.job_runtime l
     where l.namespace = p_namespace and l.expires_at < now() - (r->>'graceMs')::bigint * interval '1 millisecond';
  end if;

  -- slot_missed: an enabled recurring slot whose next cadence is overdue by several cadences.
  r := p_rules->'slot_missed';
  if r is not null then
    return query
    select 'slot_missed'::text, s.name,
           jsonb_build_object('schedule', s.name, 'scheduleNamespace', s.schedule_namespace,
                              'overdueMs', floor(extract(epoch from now() - s.next_run_at) * 1000)::bigint,
                              'lastFiredAt', workhorse.json_time_v1(s.last_fired_at), 'declared', s.declared)
      from workhorse.schedules s
     where s.namespace = p_namespace and s.enabled
       and s.next_run_at < now() - (case when s.interval_ms is not null then (r->>'cadences')::integer * s.interval_ms
                                         else (r->>'cronGraceMs')::bigint end) * interval '1 millisecond';
  end if;

  -- held_xmin: a session of this database whose open transaction (or idle-in-transaction session)
  -- holds a snapshot older than maxAgeMs, or a replication slot holding an xmin older than maxSlotXidAge.
  r := p_rules->'held_xmin';
  if r is not null then
    return query
    select 'held_xmin'::text, 'backend:' || a.pid || ':' || floor(extract(epoch from a.backend_start))::bigint,
           jsonb_build_object('source', 'backend', 'pid', a.pid, 'state', a.state, 'user', a.usename,
                              'applicationName', a.application_name, 'clientAddr', a.client_addr::text,
                              'xactAgeMs', floor(extract(epoch from now() - a.xact_start) * 1000)::bigint,
                              'xminAge', age(a.backend_xmin), 'query', left(a.query, 200))
      from pg_stat_activity a
     where a.datname = current_database() and a.pid <> pg_backend_pid() and a.backend_type = 'client backend'
       and (a.backend_xmin is not null or a.backend_xid is not null)
       and a.xact_start < now() - (r->>'maxAgeMs')::bigint * interval '1 millisecond'
    union all
    select 'held_xmin'::text, 'slot:' || s.slot_name,
           jsonb_build_object('source', 'replication_slot', 'slot', s.slot_name, 'slotType', s.slot_type, 'active', s.active,
                              'xminAge', greatest(age(s.xmin), age(s.catalog_xmin)))
      from pg_replication_slots s
     where greatest(coalesce(age(s.xmin), 0), coalesce(age(s.catalog_xmin), 0)) > (r->>'maxSlotXidAge')::bigint;
  end if;
end $$;
comment on function workhorse.alert_conditions_v1(text, jsonb) is
  'The conditions that hold now, as (rule, key, details), for the rules present in p_rules with their thresholds: backlog {max} and oldest_ready {maxAgeMs} (due ready jobs without a lease, per unpaused queue), failure_rate {windowMs, maxRate, minFailures} (per type), dead_worker {missedHeartbeats, blindBeganMsAgo?, blindEndedMsAgo?} (silent for more than missedHeartbeats + 0.5 heartbeats, not counting silence within the evaluator''s own blind spell when given, unless already open; a worker''s <id>:schedules and <id>:schedules:sys not while <id> is dead too), unhandled_type {minAgeMs} (key type@queue: no live worker claims it), stuck_lease {graceMs} (key job id), slot_missed {cadences, cronGraceMs} (key schedule name), held_xmin {maxAgeMs, maxSlotXidAge} (sessions of this database, key backend:<pid>:<start>; replication slots, key slot:<name>). Reads only.';

-- A time in an event payload as JavaScript's toISOString writes it (UTC,
-- milliseconds, "Z"), the form of the envelope's publishedAt; null stays null.
create function workhorse.json_time_v1(p_at timestamptz)
returns text language sql stable as $$
  select to_char(p_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;
comment on function workhorse.json_time_v1(timestamptz) is
  'p_at as an ISO 8601 UTC text with milliseconds (2026-12-02T13:59:22.292Z), as JavaScript''s toISOString writes it: the times in outbox event payloads.';

create function workhorse.evaluate_alerts_v2(p_namespace text, p_rules jsonb, p_publish boolean)
returns table (rule text, key text, state text, opened_at timestamptz, resolved_at timestamptz, details jsonb)
language plpgsql as $$
#variable_conflict use_column
begin
  perform workhorse.check_namespace_v1(p_namespace);
  return query
  with cond as (
    select c.rule, c.key, c.details from workhorse.alert_conditions_v1(p_namespace, p_rules) c
  ), opened as (
    insert into workhorse.alerts as a (namespace, rule, key, details)
    select p_namespace, c.rule, c.key, c.details from cond c
    on conflict (namespace, rule, key) where state = 'open' do nothing
    returning a.rule, a.key, a.state, a.opened_at, a.resolved_at, a.details
  ), resolved as (
    -- An open alert of a rule no longer in p_rules (turned off, `false`) is
    -- resolved too, marked turnedOff: nothing would ever evaluate it again,
    -- and it stayed open for good.
    update workhorse.alerts a set state = 'resolved', resolved_at = now(),
           details = case when p_rules ? a.rule then a.details
                          else a.details || '{"turnedOff": true}'::jsonb end
     where a.namespace = p_namespace and a.state = 'open'
       and not exists (select 1 from cond c where c.rule = a.rule and c.key = a.key)
    returning a.rule, a.key, a.state, a.opened_at, a.resolved_at, a.details
  ), refreshed as (
    -- An alert still open shows what its condition measures now (the backlog as it grows).
    update workhorse.alerts a set details = c.details
      from cond c
     where a.namespace = p_namespace and a.state = 'open' and a.rule = c.rule and a.key = c.key
       and a.details is distinct from c.details
    returning 1
  ), changes as (
    select * from opened union all select * from resolved
  ), published as (
    insert into workhorse.outbox_events (namespace, topic, key, payload)
    select p_namespace, 'workhorse.alert', 'alert:' || c.rule || ':' || c.key,
           jsonb_build_object('rule', c.rule, 'key', c.key, 'state', c.state,
                              'openedAt', workhorse.json_time_v1(c.opened_at),
                              'resolvedAt', workhorse.json_time_v1(c.resolved_at), 'details', c.details)
      from changes c
     where p_publish
    returning 1
  )
  select c.rule, c.key, c.state, c.opened_at, c.resolved_at, c.details from changes c order by c.rule, c.key;
  if found and p_publish then perform pg_notify(workhorse.outbox_channel_v1(p_namespace), '0'); end if;
end $$;
comment on function workhorse.evaluate_alerts_v2(text, jsonb, boolean) is
  'Evaluates the rules in p_rules (see alert_conditions_v1): opens an alert for each condition without an open one (dedupe on namespace, rule, key), refreshes the details of the open ones whose condition still holds, resolves the open alerts whose condition no longer holds (and those of rules not in p_rules, turned off: details.turnedOff), and, when p_publish (the evaluator has outbox sinks to deliver them), publishes each opening and resolution on the outbox topic workhorse.alert (key alert:<rule>:<key>) in the same transaction. Returns the alerts it opened or resolved.';

-- The version before p_publish: publishes every change.
create function workhorse.evaluate_alerts_v1(p_namespace text, p_rules jsonb)
returns table (rule text, key text, state text, opened_at timestamptz, resolved_at timestamptz, details jsonb)
language sql as $$
  select * from workhorse.evaluate_alerts_v2(p_namespace, p_rules, true)
$$;
comment on function workhorse.evaluate_alerts_v1(text, jsonb) is
  'evaluate_alerts_v2(p_namespace, p_rules, true): evaluates the rules and publishes every opening and resolution on workhorse.alert.';


create function workhorse.list_alerts_v1(p_namespace text, p_state text, p_limit integer)
returns table (rule text, key text, state text, opened_at timestamptz, resolved_at timestamptz, details jsonb)
language plpgsql stable as $$
#variable_conflict use_column
begin
  if p_state is not null and p_state not in ('open', 'resolved') then
    raise exception 'invalid alert state %', p_state using errcode = '22023';
  end if;
  return query
  select a.rule, a.key, a.state, a.opened_at, a.resolved_at, a.details from workhorse.alerts a
   where a.namespace = p_namespace and (p_state is null or a.state = p_state)
   order by a.id desc limit least(greatest(p_limit, 1), 1000);
end $$;
comment on function workhorse.list_alerts_v1(text, text, integer) is
  'Alerts of the namespace, newest first, filtered by state (open | resolved) when not null, at most p_limit (1..1000). Refuses an unknown state with 22023.';

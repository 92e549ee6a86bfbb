-- enqueue: insert jobs. A second enqueue with the same dedupe_key returns
-- the first job. Each queue that got a job is woken once per call, never
-- once per row (per-row NOTIFY serialises commits), with how long until its
-- earliest new job comes due (wake.sql), so idle workers wake when a
-- delayed job comes due rather than at their next poll.

create function workhorse.enqueue_many_v1(p_namespace text, p_jobs jsonb)
returns table (ord integer, id bigint, created boolean) language plpgsql as $$
declare
  v_ord integer[]; v_id bigint[]; v_key text[]; v_created boolean[]; v_queues text[]; v_due_ms bigint[];
  v_bad text;
begin
  perform workhorse.check_namespace_v1(p_namespace);
  if jsonb_typeof(p_jobs) is distinct from 'array' then
    raise exception 'enqueue_many_v1: p_jobs must be a JSON array of job objects' using errcode = 'WH422';
  end if;
  select case when jsonb_typeof(x.v) <> 'object' then 'a job that is not a JSON object'
              when x.v->>'type' is null then 'a job without a type'
              else 'the unknown key "' || k.k || '"' end
    into v_bad
    from jsonb_array_elements(p_jobs) x(v)
    left join lateral jsonb_object_keys(case when jsonb_typeof(x.v) = 'object' then x.v end) k(k) on true
   where jsonb_typeof(x.v) <> 'object' or x.v->>'type' is null
      or k.k not in ('type', 'queue', 'payload', 'priority', 'run_at', 'delay_ms', 'max_attempts', 'backoff_kind',
                     'backoff_base_ms', 'backoff_max_ms', 'concurrency_key', 'dedupe_key', 'timeout_ms', 'trace_context')
   limit 1;
  if v_bad is not null then
    raise exception 'enqueue_many_v1: %', v_bad using errcode = 'WH422';
  end if;

  with rows as materialized (
    select (x.ordinality)::integer as ord,
           nextval('workhorse.jobs_id_seq') as id,
           coalesce(x.value->>'queue', 'default') as queue,
           x.value->>'type' as type,
           coalesce(x.value->'payload', '{}'::jsonb) as payload,
           coalesce((x.value->>'priority')::integer, 0) as priority,
           coalesce((x.value->>'run_at')::timestamptz,
                    now() + coalesce((x.value->>'delay_ms')::bigint, 0) * interval '1 millisecond') as run_at,
           coalesce((x.value->>'max_attempts')::integer, 25) as max_attempts,
           coalesce(x.value->>'backoff_kind', 'exponential') as backoff_kind,
           coalesce((x.value->>'backoff_base_ms')::integer, 1000) as backoff_base_ms,
           coalesce((x.value->>'backoff_max_ms')::integer, 3600000) as backoff_max_ms,
           x.value->>'concurrency_key' as concurrency_key,
           x.value->>'dedupe_key' as dedupe_key,
           (x.value->>'timeout_ms')::integer as timeout_ms,
           case when jsonb_typeof(x.value->'trace_context') = 'object' then x.value->'trace_context' end as trace_context
      from jsonb_array_elements(p_jobs) with ordinality x
  ), ins as (
    insert into workhorse.jobs as t (id, namespace, queue, type, payload, priority, run_at, max_attempts,
                        backoff_kind, backoff_base_ms, backoff_max_ms, concurrency_key, dedupe_key, timeout_ms, trace_context)
    select r.id, p_namespace, r.queue, r.type, r.payload, r.priority, r.run_at, r.max_attempts,
           r.backoff_kind, r.backoff_base_ms, r.backoff_max_ms, r.concurrency_key, r.dedupe_key, r.timeout_ms, r.trace_context
      from rows r order by r.ord
    on conflict (namespace, dedupe_key) where dedupe_key is not null do nothing
    returning t.id
  ), woken as (
    select r.queue, ceil(greatest(0, date_part('epoch', min(r.run_at) - now()) * 1000))::bigint as due_ms
      from rows r join ins on ins.id = r.id
     group by r.queue
  )
  select array_agg(r.ord order by r.ord), array_agg(r.id order by r.ord),
         array_agg(r.dedupe_key order by r.ord), array_agg(ins.id is not null order by r.ord),
         (select array_agg(w.queue) from woken w), (select array_agg(w.due_ms) from woken w)
    into v_ord, v_id, v_key, v_created, v_queues, v_due_ms
    from rows r left join ins on ins.id = r.id;

  perform workhorse.notify_wake_v1(p_namespace, u.q, u.d) from unnest(v_queues, v_due_ms) as u(q, d);

  -- A fresh statement (and snapshot) finds the winners of dedupe conflicts,
  -- including rows committed by concurrent enqueues we waited for.
  return query
  select u.o, case when u.c then u.i else e.id end, u.c
    from unnest(v_ord, v_id, v_key, v_created) as u(o, i, k, c)
    left join workhorse.jobs e on not u.c and e.namespace = p_namespace and e.dedupe_key = u.k
   order by u.o;
end $$;
comment on function workhorse.enqueue_many_v1(text, jsonb) is
  'Inserts a JSON array of job objects in one statement. Keys (snake_case): type (required), queue (default "default"), payload, priority (lower runs first), run_at (timestamptz) or delay_ms (added to the database clock), max_attempts, backoff_kind (exponential | linear | fixed), backoff_base_ms, backoff_max_ms, concurrency_key, dedupe_key, timeout_ms, trace_context (a JSON object: the W3C trace context of the enqueueing span, { traceparent, tracestate }). Refuses anything else, a job without a type and a malformed namespace with WH422, writing nothing. Returns one row per input in input order (ord from 1): id, and created = false when a job with the same dedupe_key already existed (its id is returned). Sends one wake hint (notify_wake_v1) per queue that received a job due within wake_horizon_ms_v1(), payload = ms until its earliest new job comes due (0 = now). The caller validates payloads; the database stores what it is given.';

create function workhorse.enqueue_v1(p_namespace text, p_job jsonb)
returns table (id bigint, created boolean) language sql as $$
  select m.id, m.created from workhorse.enqueue_many_v1(p_namespace, jsonb_build_array(p_job)) m
$$;
comment on function workhorse.enqueue_v1(text, jsonb) is
  'The single-job form of enqueue_many_v1, same keys and rules: returns (id, created).';

-- claim: pick due jobs for one worker, in one statement per queue.
--
-- The claim walks jobs_ready_idx (a partial index of ready rows only) in
-- claim order (priority, run_at, id), skipping rows that already have a
-- lease (a running job is a ready job with a lease: see 009_lean_leases),
-- rows other claimers hold (FOR UPDATE SKIP LOCKED), types the worker has
-- no handler for, jobs that do not fit a tick's time left, and jobs whose
-- concurrency key is held (each key's gate is taken at most once per batch;
-- ON CONFLICT DO NOTHING settles races between claimers). It writes only the
-- lease rows (UNLOGGED), each with its attempt and its execution (the
-- fence: the job's last execution + 1, above the lease epoch's floor); the
-- job row is not touched.
--
-- Measured choices: PL/pgSQL rather than SQL, so the statement is parsed
-- once per session (about 1 ms less per claim, most of an idle worker's
-- enqueue-to-start time); the statement inline rather than in a helper (each
-- `return query` layer copies every row once more, about 1 us per job); no
-- JIT (past jit_above_cost every claim was JIT-compiled: 78 ms instead of
-- 1.5 ms for a claim of 10 with 200,000 ready jobs); never a forced generic
-- plan (with LIMIT unknown the planner assumes a tenth of the ready set and,
-- past a few hundred thousand rows, sorts it all: 745 ms per claim of 500
-- with 600,000 ready jobs); epoch milliseconds from date_part (float8), not
-- extract (numeric, three times the cost).
--
-- A lease lasts p_lease_ms from when it is written (clock_timestamp()), not
-- from when the claim's transaction began (now()): a claim that waited on a
-- lock longer than a lease (an operator's LOCK TABLE, a VACUUM FULL) wrote
-- leases already expired, and recovery handed their jobs to another worker
-- while the first one ran them: each ran twice.
--
-- Plans that do not follow the statistics: the lease table churns (a row
-- inserted and deleted per job) and bloats between two autovacuum visits,
-- so the planner's idea of its size runs far ahead of the few hundred
-- leases it holds. Left to itself, once it believes the leases outnumber
-- the ready rows, it expects the anti-join to leave almost nothing and
-- reads the whole ready set, hash-anti-joins it with the lease table and
-- sorts it: with 400,000 ready jobs, 80 to 250 ms per claim instead of
-- about 1 ms, and a two-worker drain of that backlog fell from about 40,000
-- to 4,000 jobs/s for 7 to 11 s. The only right plan here is the ordered index walk
-- with a lease probe per row, whatever the sizes, so the claim function
-- turns off sorts, hash and merge joins and materialization for its
-- statements (a sort the statement cannot do without, of the claimed rows,
-- still happens).

-- The timeout rule a tick's claim applies. A job with a timeoutMs fits when
-- the timeout fits the time left. A job without one fits, unless a tick's
-- deadline already cut off one of its runs: its cut-off is remembered in the
-- attempts ledger (outcome retried, error code tick_deadline, with how long
-- it ran), and a tick claims it again only with more time left than the
-- longest run a tick cut off. Never again in ticks of the same size, still
-- in a longer tick, and always by long-lived workers (no limit). The ledger
-- is read only for an untimed job whose last error is such a cut-off, so the
-- hot path reads no extra rows.

-- The longest run of `p_job_id` that a tick's deadline cut off, in ms (null: never).
create function workhorse.tick_cutoff_ms_v1(p_job_id bigint)
returns integer language sql stable as $$
  select max(date_part('epoch', a.finished_at - coalesce(a.started_at, a.finished_at)) * 1000)::integer
    from workhorse.job_attempts a
   where a.job_id = p_job_id and a.error->>'code' = 'tick_deadline'
$$;
comment on function workhorse.tick_cutoff_ms_v1(bigint) is
  'The longest run of the job that a tick''s deadline cut off (attempts ledger rows with error code tick_deadline), in milliseconds; null when none was.';

-- Whether a claimer with p_max_timeout_ms left may take a job (null: no
-- limit, a long-lived worker). The ledger is read only for an untimed job
-- whose last error is a tick's cut-off, so the hot path reads no extra rows.
create function workhorse.fits_tick_v1(
  p_max_timeout_ms integer, p_timeout_ms integer, p_last_error jsonb, p_job_id bigint)
returns boolean language sql stable as $$
  select case
    when p_max_timeout_ms is null then true
    when p_timeout_ms is not null then p_timeout_ms <= p_max_timeout_ms
    when p_last_error is null or p_last_error->>'code' is distinct from 'tick_deadline' then true
    else p_max_timeout_ms > coalesce(workhorse.tick_cutoff_ms_v1(p_job_id), 0)
  end
$$;
comment on function workhorse.fits_tick_v1(integer, integer, jsonb, bigint) is
  'Claim rule: a job fits a claimer with p_max_timeout_ms left (null = no limit) if its timeout_ms fits, or, without one, unless a tick already cut off a run at least that long.';

-- The lease table is UNLOGGED: a crash or a failover empties it, and with
-- it lease_marker. The first claim after that starts a new lease epoch, so
-- every execution issued from then on is above any issued before.
create function workhorse.begin_lease_epoch_v1()
returns bigint language plpgsql as $$
declare
  v_epoch bigint;
begin
  -- Claimers racing here take turns; the ones after the first find its marker.
  perform 1 from workhorse.lease_epoch for update;
  select m.epoch into v_epoch from workhorse.lease_marker m;
  if found then return v_epoch; end if;
  update workhorse.lease_epoch set epoch = epoch + 1 returning epoch into v_epoch;
  insert into workhorse.lease_marker (epoch) values (v_epoch)
  on conflict (id) do update set epoch = greatest(workhorse.lease_marker.epoch, excluded.epoch)
  returning epoch into v_epoch;
  return v_epoch;
end $$;
comment on function workhorse.begin_lease_epoch_v1() is
  'Starts a new lease epoch (after the UNLOGGED lease table was emptied by a crash or a failover): increments lease_epoch (logged) and records it in lease_marker (UNLOGGED). Returns the epoch; executions issued in it are at least epoch * 10^12, so none repeats one issued before.';

create function workhorse.claim_many_v1(
  p_namespace text, p_worker_id text, p_queues text[], p_types text[], p_limit integer,
  p_lease_ms integer, p_max_timeout_ms integer default null, p_start integer default null)
returns setof workhorse.claimed_job language plpgsql
set jit = off
-- The plan is pinned to a walk of jobs_ready_idx in claim order with a
-- probe of job_runtime_pkey per row: see "Plans that do not follow the
-- statistics" above.
set enable_sort = off
set enable_hashjoin = off
set enable_mergejoin = off
set enable_material = off
as $$
declare
  v_left integer := p_limit;
  v_start integer := coalesce(p_start, p_limit);
  v_allowed integer;
  v_want integer;
  v_got integer;
  v_queue text;
  v_limited boolean;
  v_paused boolean;
  v_epoch bigint;
  v_locked text[];
  q workhorse.queues;
begin
  select w.operator_paused into v_paused from workhorse.worker_registry w
   where w.namespace = p_namespace and w.id = p_worker_id;
  if not found then
    raise exception 'worker % is not registered in namespace %', p_worker_id, p_namespace using errcode = 'WH404';
  end if;
  if v_paused or p_limit <= 0 or cardinality(p_types) = 0 then return; end if;
  select m.epoch into v_epoch from workhorse.lease_marker m;
  if not found then v_epoch := workhorse.begin_lease_epoch_v1(); end if;
  -- The rows of the limited queues among several are locked up front, in
  -- one order (by name), whatever order this claim tries the queues in:
  -- workers rotate their queues, and two claims that locked two limited
  -- queues in opposite orders deadlocked (one failed after deadlock_timeout).
  -- A queue limited or resumed since is not waited for below: one held by
  -- another claimer is passed over this time.
  if cardinality(p_queues) > 1 then
    select coalesce(array_agg(l.name), '{}') into v_locked
      from (select u.name from workhorse.queues u
             where u.namespace = p_namespace and u.name = any(p_queues) and not u.paused
               and (u.concurrency_limit is not null or u.rate_limit is not null)
             order by u.name
               for update) l;
  end if;
  foreach v_queue in array p_queues loop
    exit when v_left <= 0;
    select * into q from workhorse.queues where namespace = p_namespace and name = v_queue;
    v_limited := found and (q.paused or q.concurrency_limit is not null or q.rate_limit is not null);
    v_allowed := v_left;
    v_want := v_left;
    if v_limited then
      continue when q.paused;
      if v_locked is null or v_queue = any(v_locked) then
        select * into q from workhorse.queues where namespace = p_namespace and name = v_queue for update;
      else
        select * into q from workhorse.queues where namespace = p_namespace and name = v_queue for update skip locked;
        continue when not found;
      end if;
      continue when q.paused;
      if q.concurrency_limit is not null then
        v_allowed := least(v_allowed, q.concurrency_limit - (
          select count(*) from workhorse.job_runtime r
           where r.namespace = p_namespace and r.queue = v_queue)::integer);
      end if;
      if q.rate_limit is not null then
        q.tokens := least(q.rate_limit::double precision,
          q.tokens + q.rate_limit * extract(epoch from now() - q.refilled_at) * 1000 / q.rate_period_ms);
        v_allowed := least(v_allowed, floor(q.tokens)::integer);
      end if;
    end if;
    -- Waiting jobs whose wake time or timeout passed become ready here (one
    -- probe of the waiting index when none is due); other claimers of the
    -- queue (other types, or more room) are woken too.
    if exists (select 1 from workhorse.jobs w
                where w.namespace = p_namespace and w.queue = v_queue and w.status = 'waiting' and w.run_at <= now()) then
      if workhorse.promote_due_v1(p_namespace, v_queue, 1000) > 0 then
        perform workhorse.notify_wake_v1(p_namespace, v_queue, 0);
      end if;
    end if;
    v_got := 0;
    if v_allowed > 0 then
      return query
      with cand as (
        select j.id, j.queue, j.type, j.payload, j.priority, j.run_at, j.attempt, j.max_attempts,
               j.execution, j.timeout_ms, j.concurrency_key, j.progress, j.created_at, j.trace_context
          from workhorse.jobs j
         where j.namespace = p_namespace and j.queue = v_queue and j.status = 'ready'
           and j.run_at <= now()
           and j.type = any(p_types)
           and not exists (select 1 from workhorse.job_runtime r where r.job_id = j.id)
           and workhorse.fits_tick_v1(p_max_timeout_ms, j.timeout_ms, j.last_error, j.id)
           and (j.concurrency_key is null or not exists (
                 select 1 from workhorse.job_gates g where g.namespace = p_namespace and g.key = j.concurrency_key))
         order by j.priority, j.run_at, j.id
         limit v_allowed
         for update of j skip locked
      ), gated as (
        insert into workhorse.job_gates (namespace, key, job_id)
        select distinct on (c.concurrency_key) p_namespace, c.concurrency_key, c.id
          from cand c where c.concurrency_key is not null
         order by c.concurrency_key, c.priority, c.run_at, c.id
        on conflict do nothing
        returning job_id
      ), picked as (
        select c.*, row_number() over (order by c.priority, c.run_at, c.id) as rank
          from cand c where c.concurrency_key is null or c.id in (select g.job_id from gated g)
      ), lease as (
        -- ON CONFLICT: a claimer whose snapshot predates another's committed
        -- lease may lock the same row after it; the lease it loses is not returned.
        insert into workhorse.job_runtime (job_id, namespace, worker_id, queue, execution, attempt, expires_at, started)
        select p.id, p_namespace, p_worker_id, p.queue, greatest(p.execution + 1, v_epoch * 1000000000000), p.attempt + 1,
               clock_timestamp() + p_lease_ms * interval '1 millisecond', p.rank <= v_start
          from picked p
         order by p.rank
        on conflict (job_id) do nothing
        returning job_id
      )
      -- The leases won, looked up in a hash of them (the execution is the
      -- one the insert computed). Not a join: on a table not yet analyzed
      -- the planner expects one row from each side and picks a nested loop,
      -- N x N comparisons (8 ms for a claim of 250).
      select p.id, p.queue, p.type, p.payload, p.priority, date_part('epoch', p.run_at) * 1000,
             p.attempt + 1, p.max_attempts, greatest(p.execution + 1, v_epoch * 1000000000000),
             p.timeout_ms, p.concurrency_key, p.progress,
             date_part('epoch', p.created_at) * 1000,
             date_part('epoch', clock_timestamp() + p_lease_ms * interval '1 millisecond') * 1000,
             p.trace_context
        from picked p
       where coalesce(p.id in (select l.job_id from lease l), false)
       order by p.rank;
      get diagnostics v_got = row_count;
      v_left := v_left - v_got;
      v_start := greatest(0, v_start - v_got);
    end if;
    if v_limited and q.rate_limit is not null then
      update workhorse.queues set tokens = q.tokens - v_got, refilled_at = now()
       where namespace = p_namespace and name = v_queue;
      -- Held back by the rate (it allowed less than wanted, and that much was
      -- claimed, so more may be due): the queue's claimers are told when the
      -- bucket holds what was wanted again (a hint at that time, delivered at
      -- commit), rather than finding out at their next poll, which ran the
      -- queue below its rate when the period was near the poll interval.
      if q.rate_limit > 0 and v_allowed = floor(q.tokens) and v_allowed < v_want and v_got = v_allowed then
        perform workhorse.notify_wake_v1(p_namespace, v_queue, ceil(
          (least(q.rate_limit, v_want) - (q.tokens - v_got)) * q.rate_period_ms / q.rate_limit)::bigint);
      end if;
    end if;
  end loop;
end $$;
comment on function workhorse.claim_many_v1(text, text, text[], text[], integer, integer, integer, integer) is
  'Claims up to p_limit due ready jobs of p_types for worker p_worker_id across p_queues, in the order given (rotate it so no queue starves), each lease lasting p_lease_ms. Skips paused queues, held concurrency keys, exhausted queue concurrency and rate limits (taken under the queue row lock; a claim the rate held back sends the queue a wake hint for when the bucket holds what it wanted), and, when p_max_timeout_ms is set (a tick), jobs that do not fit it by fits_tick_v1. The first p_start claimed rows (default: all) are the ones the worker starts at once: their leases are marked started; the rest are marked by a later heartbeat. First promotes the queue''s waiting jobs that are due (promote_due_v1), waking the queue when it did. Writes lease rows (and gates, a rate-limited queue''s tokens and, after the lease table was emptied, a new lease epoch), never the job row: it stays ready, and reads report it running. Returns only the leases it won. Refuses an unregistered worker with WH404; an operator-paused worker gets no rows. Returns workhorse.claimed_job rows (queue by queue, each in claim order); every later write for a job must carry its execution.';

create function workhorse.claim_v1(
  p_namespace text, p_worker_id text, p_queues text[], p_types text[], p_lease_ms integer,
  p_max_timeout_ms integer default null)
returns setof workhorse.claimed_job language sql as $$
  select * from workhorse.claim_many_v1(p_namespace, p_worker_id, p_queues, p_types, 1, p_lease_ms, p_max_timeout_ms, 1)
$$;
comment on function workhorse.claim_v1(text, text, text[], text[], integer, integer) is
  'The single-job form of claim_many_v1, same rules; the job is marked started.';

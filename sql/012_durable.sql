-- 012_durable: durable waits. A job that sleeps, waits for a signal, a
-- human decision or its child jobs leaves `running` for `waiting`: its
-- lease is gone, its row says when it is due (run_at, by the database
-- clock; 9999-01-01 for a wait without a timeout), and what it waits for is
-- a row of job_waits. The functions are in protocol/waits.sql,
-- signals.sql and children.sql.

-- One row per named wait of a job, kept after it resolves: a replay of the
-- handler reads the recorded outcome instead of waiting again.
create table workhorse.job_waits (
  job_id       bigint      not null,
  name         text        not null,
  namespace    text        not null,
  kind         text        not null check (kind in ('sleep', 'signal', 'decision', 'join')),
  -- A signal wait may also be addressed by a key (client.signalKey).
  key          text,
  -- When a sleep ends, or when a signal, decision or join wait times out (null: never).
  wake_at      timestamptz,
  started_at   timestamptz not null default now(),
  resolved_at  timestamptz,
  -- done (the signal, decision, children or wake time arrived) or timeout.
  outcome      text        check (outcome in ('done', 'timeout')),
  -- The signal's payload, the decision ({ choice, by, comment, at }) or the children's outcomes.
  value        jsonb,
  choices      text[],
  prompt       text,
  children     bigint[],
  mode         text        check (mode in ('all', 'any')),
  primary key (job_id, name)
);
-- Key-addressed signals find the open wait of their key.
create index job_waits_key_idx on workhorse.job_waits (namespace, key, name, started_at)
  where key is not null and resolved_at is null;
-- What is waiting for people (client.pendingDecisions, GET /decisions).
create index job_waits_decisions_idx on workhorse.job_waits (namespace, started_at)
  where kind = 'decision' and resolved_at is null;

-- Signals, addressed to a job or to a key. One that arrives before its wait
-- is kept here until the wait consumes it.
create table workhorse.job_signals (
  id           bigint      generated always as identity primary key,
  namespace    text        not null,
  job_id       bigint,
  key          text,
  name         text        not null,
  payload      jsonb,
  sent_at      timestamptz not null default now(),
  consumed_by  bigint,
  consumed_at  timestamptz,
  check ((job_id is null) <> (key is null))
);
-- A job takes one signal per name; a key holds at most one signal per name
-- not yet consumed (a second is refused: see protocol/signals.sql).
create unique index job_signals_job_idx on workhorse.job_signals (job_id, name) where job_id is not null;
create unique index job_signals_key_idx on workhorse.job_signals (namespace, key, name)
  where key is not null and consumed_at is null;
create index job_signals_consumer_idx on workhorse.job_signals (consumed_by) where consumed_by is not null;

-- The children a job spawned, once per name.
create table workhorse.job_children (
  parent_id  bigint  not null,
  name       text    not null,
  child_id   bigint  not null unique,
  -- A detached child is not cancelled with its parent.
  detached   boolean not null default false,
  primary key (parent_id, name)
);

-- A child knows its parent, so its settlement wakes a parent joining it
-- without a lookup for jobs that have none.
alter table workhorse.jobs add column parent_id bigint;

-- Waiting rows by due time: the claim promotes the due ones, next_due reads the earliest.
drop index workhorse.jobs_waiting_idx;
create index jobs_waiting_idx on workhorse.jobs (namespace, queue, run_at) where status = 'waiting';

insert into workhorse.migrations (version, name) values (12, 'durable') on conflict (version) do nothing;

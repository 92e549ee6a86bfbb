-- 003_schedules: the recurring slots' table (their functions are in
-- protocol/schedules.sql).
--
-- next_run_at is always stored at millisecond precision so the value a
-- claimer reads back (a JavaScript Date) compares equal in the fence.

create table workhorse.schedules (
  namespace           text        not null,
  name                text        not null,
  -- The group a worker opts into with `scheduleNamespaces`; sys.* slots are in `sys`.
  schedule_namespace  text        not null default 'default',
  cron                text,
  timezone            text,
  interval_ms         bigint      check (interval_ms is null or interval_ms > 0),
  -- The job each cadence enqueues, as enqueue_many_v1 takes it (type, queue, payload, ...).
  job                 jsonb       not null,
  enabled             boolean     not null default true,
  next_run_at         timestamptz not null,
  last_fired_at       timestamptz,
  last_cadence        timestamptz,
  claimed_by          text,
  claimed_until       timestamptz,
  created_at          timestamptz not null default now(),
  updated_at          timestamptz not null default now(),
  primary key (namespace, name),
  check ((cron is null) <> (interval_ms is null))
);
create index schedules_due_idx on workhorse.schedules (namespace, next_run_at) where enabled;

insert into workhorse.migrations (version, name) values (3, 'schedules') on conflict (version) do nothing;

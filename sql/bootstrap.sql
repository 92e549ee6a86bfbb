-- bootstrap: what every other file needs, run first, in the same transaction
-- as the rest. The advisory lock (transaction-scoped, so it is safe behind a
-- transaction pooler and nothing outlives the transaction) serialises
-- concurrent installers: fifty processes migrating at once apply each file
-- once and the rest find nothing to do.
--
-- Installing with psql alone (no TypeScript) runs the files listed in
-- sql/ORDER, in that order, in one transaction:
--   psql -1 -v ON_ERROR_STOP=1 $(sed 's|^|-f sql/|' sql/ORDER)
-- That is for an empty database; `workhorse migrate` also upgrades one.

select pg_advisory_xact_lock(7700011999);

create schema if not exists workhorse;

-- One row per numbered file applied (tables and indexes; each file records itself).
create table if not exists workhorse.migrations (
  version     integer     primary key,
  name        text        not null,
  applied_at  timestamptz not null default now()
);

-- The checksum of the protocol files (sql/protocol/) last applied by
-- `workhorse migrate`, which re-applies them when it differs.
create table if not exists workhorse.protocol_state (
  id          boolean     primary key default true check (id),
  checksum    text        not null,
  applied_at  timestamptz not null default now()
);

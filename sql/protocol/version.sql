-- version: the schema version this database is at, for clients to check at
-- start-up (they refuse a schema older or newer than their code). It is the
-- number of the newest numbered file applied: every protocol change an
-- older client cannot run against comes with a numbered file.

create function workhorse.schema_version_v1()
returns integer language sql stable as $$
  select max(m.version) from workhorse.migrations m
$$;
comment on function workhorse.schema_version_v1() is
  'The schema version: the number of the newest numbered migration applied (null before any). A client refuses to run unless it equals the version its code was written against.';

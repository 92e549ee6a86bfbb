-- 008_runtime_role: the least-privilege role the runtime connects as.
--
-- `workhorse_runtime` (NOLOGIN) may use the schema, execute its functions,
-- read and write the rows the protocol functions work on and read the
-- migrations table (the version check); it owns nothing and may not create
-- in the schema, so a credential that is only a member of it cannot create,
-- alter, drop or truncate anything. The tick and HTTP functions log in as a
-- member; migrations keep running as the owner:
--
--   create role workhorse_app login password '...' in role workhorse_runtime;
--
-- Creating a role needs CREATEROLE (or superuser). A migrating user without
-- it, while no workhorse_runtime role exists yet, creates nothing: this
-- migration succeeds with a WARNING, and once someone with CREATEROLE runs
-- `create role workhorse_runtime nologin`, the next migrate() (or
-- `select workhorse.grant_runtime_v1()`) grants. Roles belong to the whole
-- cluster: every workhorse database on it grants to the same role.
--
-- The grants themselves are in protocol/grants.sql (grant_runtime_v1(),
-- called at the end of every install), so every function and table, now or
-- added later, is covered.

do $$
begin
  if exists (select 1 from pg_roles where rolname = 'workhorse_runtime') then
    return;
  end if;
  if not (select rolcreaterole or rolsuper from pg_roles where rolname = current_user) then
    raise warning 'workhorse: role workhorse_runtime does not exist and % may not create roles (no CREATEROLE); '
      'create it with `create role workhorse_runtime nologin`, then run `select workhorse.grant_runtime_v1()` '
      'or migrate again', current_user;
    return;
  end if;
  begin
    create role workhorse_runtime nologin;
  exception when duplicate_object or unique_violation then
    null; -- another database on this cluster created it at the same moment
  end;
end $$;

insert into workhorse.migrations (version, name) values (8, 'runtime_role') on conflict (version) do nothing;

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
-- Objects later migrations add are covered twice over: default privileges
-- for what the migrating owner creates in the schema, and migrate() calling
-- grant_runtime_v1() at the end of every run that applied a file (which also
-- covers files applied by another role).

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

-- Grants workhorse_runtime what the protocol needs on every object now in
-- the schema, and (as default privileges) on what the calling role creates
-- there later. Returns false, changing nothing, when the role does not exist.
-- Run it as the schema's owner (or a superuser); it is idempotent.
create function workhorse.grant_runtime_v1()
returns boolean language plpgsql as $$
begin
  if not exists (select 1 from pg_roles where rolname = 'workhorse_runtime') then
    return false;
  end if;
  grant usage on schema workhorse to workhorse_runtime;
  grant select, insert, update, delete on all tables in schema workhorse to workhorse_runtime;
  if to_regclass('workhorse.migrations') is not null then
    revoke insert, update, delete on workhorse.migrations from workhorse_runtime;
  end if;
  grant usage, select on all sequences in schema workhorse to workhorse_runtime;
  grant execute on all functions in schema workhorse to workhorse_runtime;
  -- No runtime call changes grants.
  revoke execute on function workhorse.grant_runtime_v1() from workhorse_runtime, public;
  alter default privileges in schema workhorse grant select, insert, update, delete on tables to workhorse_runtime;
  alter default privileges in schema workhorse grant usage, select on sequences to workhorse_runtime;
  alter default privileges in schema workhorse grant execute on functions to workhorse_runtime;
  return true;
end $$;

comment on function workhorse.grant_runtime_v1() is
  'Grants role workhorse_runtime USAGE on schema workhorse, SELECT/INSERT/UPDATE/DELETE on its tables '
  '(SELECT only on migrations), USAGE/SELECT on its sequences and EXECUTE on its functions, now and, as '
  'default privileges, for objects the caller creates there later. Never CREATE, TRUNCATE or ownership. '
  'Returns false and changes nothing when the role does not exist. Idempotent; run as the schema owner.';

select workhorse.grant_runtime_v1();

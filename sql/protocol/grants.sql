-- grants: what the least-privilege runtime role (workhorse_runtime, created
-- by 008_runtime_role) may do. Runs last in every install, because the
-- protocol files re-create every function (dropping their grants).

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
  revoke insert, update, delete on workhorse.migrations, workhorse.protocol_state from workhorse_runtime;
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
  '(SELECT only on migrations and protocol_state), USAGE/SELECT on its sequences and EXECUTE on its functions, now and, as '
  'default privileges, for objects the caller creates there later. Never CREATE, TRUNCATE or ownership. '
  'Returns false and changes nothing when the role does not exist. Idempotent; run as the schema owner.';

select workhorse.grant_runtime_v1();

-- reset: the protocol files define every function and type of the schema
-- from scratch, so a function changed or dropped in protocol/ is changed or
-- gone in the database too, and no body ever needs restating elsewhere.
-- This runs first: it drops every function and every free-standing
-- composite type in the workhorse schema (tables are untouched). The whole
-- install is one transaction, so no caller ever sees the schema without
-- its functions.
do $$
declare
  r record;
begin
  for r in
    select p.oid::regprocedure as fn
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where n.nspname = 'workhorse'
  loop
    execute format('drop function %s', r.fn);
  end loop;
  for r in
    select t.oid::regtype as ty
      from pg_type t
      join pg_namespace n on n.oid = t.typnamespace
      join pg_class c on c.oid = t.typrelid
     where n.nspname = 'workhorse' and t.typtype = 'c' and c.relkind = 'c'
  loop
    execute format('drop type %s', r.ty);
  end loop;
end $$;

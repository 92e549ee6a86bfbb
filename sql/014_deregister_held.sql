-- 014_deregister_held: deregister_worker_v2 (protocol/registry.sql) expires
-- only the leases the stopping process names, not every lease under its
-- worker id, so two processes given one id do not expire each other's
-- leases. No table changes: the number marks the protocol version clients
-- check.
insert into workhorse.migrations (version, name) values (14, 'deregister_held') on conflict (version) do nothing;

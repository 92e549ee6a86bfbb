-- 019_release_unstarted: a stopping worker held its claimed-but-unstarted
-- jobs (the prefetch buffer) for its whole drain, as long as its slowest
-- handler ran, and for a whole lease when the drain ended at once.
-- release_unstarted_v1 (protocol/registry.sql) hands them back when the
-- drain begins; deregister_worker_v2 now calls it for what is left. No
-- table changes; the number marks the protocol a client of this version
-- needs.

insert into workhorse.migrations (version, name) values (19, 'release_unstarted') on conflict (version) do nothing;

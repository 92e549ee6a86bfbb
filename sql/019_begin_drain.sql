-- 019_begin_drain: a stopping worker's registry row said `active` until it
-- was deleted, and the worker held its claimed-but-unstarted jobs (the
-- prefetch buffer) for its whole drain, as long as its slowest handler ran,
-- and for a whole lease when the drain ended at once. begin_drain_v1
-- (protocol/registry.sql) marks the row draining and hands the buffer back
-- when the drain begins (release_unstarted_v1, which deregister_worker_v2
-- now calls too). No table changes; the number marks the protocol a client
-- of this version needs.

insert into workhorse.migrations (version, name) values (19, 'begin_drain') on conflict (version) do nothing;

-- 005_dead_jobs_index: listing failed or cancelled jobs (the dead letters an
-- operator looks at) without walking the whole table. list_jobs_v1 pages
-- newest first along the primary key; for a status most rows have
-- (succeeded) that finds a page at once, but for a rare one it read every
-- row. A partial index holds only failed and cancelled rows, so the hot path
-- (ready -> running -> succeeded) never writes to it.
--
-- Caveat: like every migration this runs in one transaction, so the index
-- is built without CONCURRENTLY and blocks writes to jobs while it builds
-- (seconds per few million rows).
create index jobs_dead_idx on workhorse.jobs (namespace, id)
  where status in ('failed', 'cancelled');

insert into workhorse.migrations (version, name) values (5, 'dead_jobs_index') on conflict (version) do nothing;

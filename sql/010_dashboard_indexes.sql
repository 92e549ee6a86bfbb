-- 010_dashboard_indexes: the attempts ledger by time, for the dashboard's
-- per-minute throughput over the last hour (dashboard_throughput_v1 in
-- protocol/dashboard.sql). Without it that read walks the whole ledger, the
-- largest table, on every refresh. The ledger is insert-only and finished_at
-- is the settle time, so each insert lands at the right-hand edge of the
-- index: one more index insertion per settled attempt on the hot path.
--
-- Caveat: like every migration this runs in one transaction, so the index
-- is built without CONCURRENTLY and blocks writes to job_attempts while it
-- builds (seconds per few million rows).
create index job_attempts_finished_idx on workhorse.job_attempts (namespace, finished_at);

insert into workhorse.migrations (version, name) values (10, 'dashboard_indexes') on conflict (version) do nothing;

-- 006_fault_tolerance: what a database fault (or a crash) does to the books
-- (the functions that use these columns are in protocol/).
--
--  * A lease knows whether its handler started (job_runtime.started). The
--    claim marks the rows the worker starts at once (the first p_start in
--    claim order); jobs it buffers are marked by a later heartbeat. Recovery
--    counts an attempt only against a started lease: a prefetched job whose
--    worker died before starting it goes back to ready with its attempt
--    returned (ledger outcome `orphaned`). A job started from the buffer that
--    kills its worker before the next heartbeat looks unstarted, so after
--    two orphaned recoveries a third counts: a job that kills its worker
--    every time still ends `failed`, never in a loop.
--  * Recovery never waits for a registry row: one locked is a worker
--    heartbeating right now (alive), so marking the silent dead skips locked
--    rows. Two heartbeats whose recovery passes each wanted the other's row
--    deadlocked before (each holds its own row until commit).

alter table workhorse.job_runtime add column started boolean not null default false;

alter table workhorse.job_attempts drop constraint job_attempts_outcome_check;
alter table workhorse.job_attempts add constraint job_attempts_outcome_check
  check (outcome in ('succeeded', 'failed', 'retried', 'recovered', 'orphaned', 'cancelled', 'released'));

insert into workhorse.migrations (version, name) values (6, 'fault_tolerance') on conflict (version) do nothing;

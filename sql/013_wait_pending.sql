-- 013_wait_pending: which run of a job is waiting on each open wait. A
-- handler can open several waits at once and suspend on one of them; a
-- decision or a child's end that resolves another of them before the job
-- has suspended cannot wake it (it is not waiting yet). The suspension
-- finds such a wait by this column: the execution that opened the wait (or
-- found it still open on a replay) and has not seen it resolved. The
-- functions are in protocol/waits.sql.

alter table workhorse.job_waits add column pending_execution bigint;

insert into workhorse.migrations (version, name) values (13, 'wait_pending') on conflict (version) do nothing;

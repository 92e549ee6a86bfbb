-- 016_lost_waits: a wait that lost a race. A handler that races waits
-- (Promise.race of a signal and a sleep) goes on with the one that resolved
-- first; the others stay open, and a signal, decision or child's end that
-- reached one of them later used to resolve it, wake the job and let the
-- replay of the race pick the late winner: the handler took another branch
-- than the one it had taken. A wait the handler went on past is now closed
-- with outcome `lost` (lose_waits_v1 in protocol/waits.sql): no signal is
-- consumed by it, no decision taken for it, and every replay of the race
-- ends it the same way.

alter table workhorse.job_waits drop constraint job_waits_outcome_check;
alter table workhorse.job_waits add constraint job_waits_outcome_check check (outcome in ('done', 'timeout', 'lost'));

insert into workhorse.migrations (version, name) values (16, 'lost_waits') on conflict (version) do nothing;

-- 009_lean_leases: a claim writes only its lease; the job row is written
-- once, when the job settles.
--
-- Before, a job's row was updated twice (ready -> running at the claim,
-- running -> succeeded at the settle), each a non-HOT update of the widest
-- row with a new index entry, and its lease row was WAL-logged as it was
-- inserted, extended and deleted. Measured on 2 cores, one loop of batch
-- claims and completions of 500: 26.5 us of PostgreSQL CPU and 1,234 bytes
-- of WAL per job; now 18.5 us and 473 bytes.
--
--  * A running job is a ready job with a lease: `jobs.status` stays `ready`
--    while a lease exists, and every read reports it as `running`, with the
--    lease's attempt and execution (protocol/reads.sql). The claim skips
--    leased rows; the settlement, recovery and cancellation write the job.
--  * The lease carries the claim's attempt and execution (the job's last
--    execution + 1, written to the job row when the lease ends). That lets
--    the lease table be UNLOGGED: after a crash or a failover it comes back
--    empty, every job it leased is still `ready` in its row and claimable at
--    once (no recovery pass needed, and no attempt is counted for a database
--    crash). So that no execution is ever issued twice, a lease epoch guards
--    the fence: lease_marker (UNLOGGED) holds the current epoch and vanishes
--    with the leases; the first claim that finds it gone starts a new epoch
--    in lease_epoch (logged), and from then on executions start above
--    epoch * 10^12. A stale owner's writes carry an execution no lease holds,
--    so the fence refuses them.
--  * Gates (job_gates) live exactly as long as their job's lease, so they are
--    UNLOGGED too and vanish with the leases.
--  * The lease expiry index is gone: recovery reads the few live leases.

create table workhorse.lease_epoch (
  id     boolean primary key default true check (id),
  epoch  bigint  not null
);
insert into workhorse.lease_epoch (epoch) values (0);
create unlogged table workhorse.lease_marker (
  id     boolean primary key default true check (id),
  epoch  bigint  not null
);
insert into workhorse.lease_marker (epoch) values (0);

alter table workhorse.jobs alter column execution type bigint;
alter table workhorse.job_runtime alter column execution type bigint;
alter table workhorse.job_attempts alter column execution type bigint;
alter table workhorse.job_steps alter column execution type bigint;

alter table workhorse.job_runtime add column attempt integer;
update workhorse.job_runtime r set attempt = j.attempt from workhorse.jobs j where j.id = r.job_id;
update workhorse.job_runtime set attempt = 1 where attempt is null;
alter table workhorse.job_runtime alter column attempt set not null, alter column attempt set default 1;

-- Running jobs become ready jobs with a lease (their row as it was before the claim).
update workhorse.jobs j
   set status = 'ready', attempt = greatest(j.attempt - 1, 0), execution = greatest(j.execution - 1, 0), started_at = null
 where j.status = 'running';

-- Who ran the job's last execution (a claim no longer writes the row, and a
-- first attempt that succeeds writes no ledger row): set when a lease ends.
alter table workhorse.jobs add column last_worker text;

alter table workhorse.jobs drop constraint jobs_status_check;
alter table workhorse.jobs add constraint jobs_status_check
  check (status in ('ready', 'waiting', 'succeeded', 'failed', 'cancelled'));

drop index workhorse.job_runtime_expiry_idx;
alter table workhorse.job_runtime set unlogged;
alter table workhorse.job_gates set unlogged;

insert into workhorse.migrations (version, name) values (9, 'lean_leases') on conflict (version) do nothing;

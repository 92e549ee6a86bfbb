-- 017_lost_claims: a claim whose answer never reached its worker. When the
-- connection is lost after the claim committed, the worker never learns of
-- the leases it took; the jobs it would have started at once were marked
-- started, so recovery counted an attempt for handlers that never ran (a job
-- with maxAttempts 1 failed without running) after a whole lease. A worker
-- whose claim failed now passes p_release_unknown_ms to its next heartbeat
-- (heartbeat_many_v1 in protocol/heartbeat.sql): its leases it does not hold,
-- taken since that claim, are expired as unstarted and handed back without
-- an attempt. No table
-- changes; the number marks the protocol a client of this version needs.

insert into workhorse.migrations (version, name) values (17, 'lost_claims') on conflict (version) do nothing;

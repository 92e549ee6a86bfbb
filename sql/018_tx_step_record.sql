-- 018_tx_step_record: a transactional step whose body left a savepoint open
-- (a `rollback to savepoint` after a caught error included) was rolled back
-- whole while its handler went on as if it had committed: whether the step's
-- record was its own was told from the row's xmin, a subtransaction's id
-- there. record_tx_step_v1 (protocol/steps.sql) reports whether its insert
-- wrote the record. No table changes; the number marks the protocol a client
-- of this version needs.

insert into workhorse.migrations (version, name) values (18, 'tx_step_record') on conflict (version) do nothing;

-- 004_lean_claim: once a restatement of claim_many_v1; the claim now lives
-- in protocol/claim.sql (its measured choices are in that file's header).
-- The number stays so every database's history reads the same.
insert into workhorse.migrations (version, name) values (4, 'lean_claim') on conflict (version) do nothing;

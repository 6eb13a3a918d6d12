-- Requests the network policy refused while a run ran (docs/NETWORK_POLICY.md, "What a blocked run
-- shows") are kept as page events of their own kind, one row each, named in the run's view and
-- counted in the run's `blocked_request_count`; they end the run `target_blocked` only when it
-- failed on one of them.
ALTER TYPE "PageEventKind" ADD VALUE 'blocked';

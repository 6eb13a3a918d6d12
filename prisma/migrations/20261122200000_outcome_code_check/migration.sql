-- target_blocked and resource_limit were added by two migrations that each rewrote the check of
-- which outcome codes an error run may hold; this one lists both.
ALTER TABLE "runs" DROP CONSTRAINT "runs_outcome_code_matches_status";
ALTER TABLE "runs" ADD CONSTRAINT "runs_outcome_code_matches_status" CHECK (
    "outcome_code" IS NULL
    OR ("status" = 'error' AND "outcome_code"::text IN ('target_unreachable', 'browser_crashed', 'invalid_definition', 'timeout', 'worker_lost', 'internal_error', 'resource_limit', 'target_blocked'))
    OR ("status" = 'failed' AND "outcome_code"::text IN ('expectation_failed', 'element_not_found', 'http_error'))
);

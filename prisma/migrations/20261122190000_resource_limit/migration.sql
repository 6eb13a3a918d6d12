-- A run whose page went past a limit the worker sets (memory, popups, dialogs) ends `error` with
-- the code `resource_limit`.

-- AlterEnum
ALTER TYPE "RunOutcomeCode" ADD VALUE 'resource_limit' AFTER 'internal_error';

-- The CHECK compares text: a value added to an enum cannot be used as one in the transaction that
-- adds it.
ALTER TABLE "runs" DROP CONSTRAINT "runs_outcome_code_matches_status";
ALTER TABLE "runs" ADD CONSTRAINT "runs_outcome_code_matches_status" CHECK (
    "outcome_code" IS NULL
    OR ("status" = 'error' AND "outcome_code"::text IN ('target_unreachable', 'browser_crashed', 'invalid_definition', 'timeout', 'worker_lost', 'internal_error', 'resource_limit'))
    OR ("status" = 'failed' AND "outcome_code"::text IN ('expectation_failed', 'element_not_found', 'http_error'))
);

-- Cancel and rerun (docs/API.md, "Cancel and rerun").
--
-- A run cancelled before it started ends `skipped` with skip_reason `cancelled`; one cancelled while
-- running ends `error` with the outcome code `cancelled`. ADD VALUE commits with this migration's
-- transaction; nothing below uses the new values as enum values (the CHECK compares text).
ALTER TYPE "SkipReason" ADD VALUE 'cancelled';
ALTER TYPE "RunOutcomeCode" ADD VALUE 'cancelled' AFTER 'target_blocked';

ALTER TABLE "runs" DROP CONSTRAINT "runs_outcome_code_matches_status";
ALTER TABLE "runs" ADD CONSTRAINT "runs_outcome_code_matches_status" CHECK (
    "outcome_code" IS NULL
    OR ("status" = 'error' AND "outcome_code"::text IN ('target_unreachable', 'browser_crashed', 'invalid_definition', 'timeout', 'worker_lost', 'internal_error', 'resource_limit', 'target_blocked', 'cancelled'))
    OR ("status" = 'failed' AND "outcome_code"::text IN ('expectation_failed', 'element_not_found', 'http_error'))
);

-- When a cancel was asked for a run that was then running: a worker that claims the run afterwards
-- ends it at once, and the reconciler ends it when its worker missed the message.
ALTER TABLE "runs" ADD COLUMN "cancel_requested_at" TIMESTAMPTZ(3);

-- The suite run a rerun was made from (null for one made by POST /api/v1/runs).
ALTER TABLE "suite_runs" ADD COLUMN "rerun_of" TEXT;
ALTER TABLE "suite_runs" ADD CONSTRAINT "suite_runs_rerun_of_fkey" FOREIGN KEY ("rerun_of") REFERENCES "suite_runs"("id") ON DELETE SET NULL ON UPDATE CASCADE;
CREATE INDEX "suite_runs_rerun_of_idx" ON "suite_runs"("rerun_of");

-- A sealed copy of the request's headers and variables, kept on the suite run for a bounded time
-- (sealed_until) so that a rerun can send them again after the runs' own copies were erased.
-- sealed_fields names the request fields the copy held ("headers,secretVariables"), and stays after
-- the copy is erased so that a rerun can say which ones it must be given again.
ALTER TABLE "suite_runs" ADD COLUMN "headers_sealed" BYTEA;
ALTER TABLE "suite_runs" ADD COLUMN "variables_sealed" BYTEA;
ALTER TABLE "suite_runs" ADD COLUMN "sealed_fields" TEXT;
ALTER TABLE "suite_runs" ADD COLUMN "sealed_until" TIMESTAMPTZ(3);
ALTER TABLE "suite_runs" ADD CONSTRAINT "suite_runs_sealed_fields_check" CHECK ("sealed_fields" ~ '^(headers|variables|secretVariables)(,(headers|variables|secretVariables))*$');
CREATE INDEX "suite_runs_sealed_until_idx" ON "suite_runs"("sealed_until");

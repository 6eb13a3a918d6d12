-- The target network policy: a run whose browser asked for a target the policy refuses ends
-- `error` with the code `target_blocked`; a workspace may close more targets than the deployment.

-- AlterEnum
ALTER TYPE "RunOutcomeCode" ADD VALUE 'target_blocked' AFTER 'internal_error';

-- The new value cannot be used as an enum literal in the transaction that adds it, so the check
-- compares the code as text (same meaning: an error code only on an `error` run).
ALTER TABLE "runs" DROP CONSTRAINT "runs_outcome_code_matches_status";
ALTER TABLE "runs" ADD CONSTRAINT "runs_outcome_code_matches_status" CHECK (
    "outcome_code" IS NULL
    OR ("status" = 'error' AND "outcome_code"::text IN ('target_unreachable', 'browser_crashed', 'invalid_definition', 'timeout', 'worker_lost', 'internal_error', 'target_blocked'))
    OR ("status" = 'failed' AND "outcome_code"::text IN ('expectation_failed', 'element_not_found', 'http_error'))
);

-- AlterTable: the workspace's own denied targets (comma-separated rules, as TARGET_DENY), or none.
ALTER TABLE "workspaces" ADD COLUMN "target_deny" TEXT;

-- Playwright tests: a deployment whose project file has a `playwright:` section names the bundle
-- it was discovered from (`sha256:…`, in the artifact store) and keeps discovery's warnings (a
-- `webServer` the service ignores, another @playwright/test major.minor than the service's); read
-- as [] where null (deployments from before this migration).

-- AlterTable
ALTER TABLE "deployments" ADD COLUMN "bundle" TEXT;
ALTER TABLE "deployments" ADD COLUMN "warnings" JSONB;

-- Outcomes of Playwright tests (docs/WORKER.md, "Playwright tests: outcomes"): an exception of the
-- test's own code, a setup project that failed, a `test.fail()` that passed; skipped in code, or in
-- a project whose browser the service does not run. ADD VALUE commits with this migration's
-- transaction; nothing below uses the new values as enum values (the CHECK compares text).
ALTER TYPE "RunOutcomeCode" ADD VALUE 'test_code_error' AFTER 'cancelled';
ALTER TYPE "RunOutcomeCode" ADD VALUE 'setup_failed' AFTER 'test_code_error';
ALTER TYPE "RunOutcomeCode" ADD VALUE 'unexpected_pass';
ALTER TYPE "SkipReason" ADD VALUE 'skipped_in_code';
ALTER TYPE "SkipReason" ADD VALUE 'browser_unavailable';

ALTER TABLE "runs" DROP CONSTRAINT "runs_outcome_code_matches_status";
ALTER TABLE "runs" ADD CONSTRAINT "runs_outcome_code_matches_status" CHECK (
    "outcome_code" IS NULL
    OR ("status" = 'error' AND "outcome_code"::text IN ('target_unreachable', 'browser_crashed', 'invalid_definition', 'timeout', 'worker_lost', 'internal_error', 'resource_limit', 'target_blocked', 'cancelled', 'test_code_error', 'setup_failed'))
    OR ("status" = 'failed' AND "outcome_code"::text IN ('expectation_failed', 'element_not_found', 'http_error', 'unexpected_pass'))
);

-- A Playwright test's steps (test.step, expects, Playwright calls, hooks, fixtures) are recorded as
-- step rows, its tree flattened depth first: no step-language action, but Playwright's category,
-- the depth in the tree and the source location of the step.
ALTER TABLE "step_results" ALTER COLUMN "action" DROP NOT NULL;
ALTER TABLE "step_results" ADD COLUMN "category" TEXT;
ALTER TABLE "step_results" ADD COLUMN "depth" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "step_results" ADD COLUMN "location" TEXT;
ALTER TABLE "step_results" ADD CONSTRAINT "step_results_action_or_category" CHECK ("action" IS NOT NULL OR "category" IS NOT NULL);

-- Closed sets stay closed in the database: every column that held one of contracts' sets as free
-- text becomes a Postgres enum of exactly that set, so a value outside it cannot be written.
-- Existing rows convert as they are; a stray value stops the migration (nothing is guessed).

-- CreateEnum
CREATE TYPE "RunOutcomeCode" AS ENUM ('target_unreachable', 'browser_crashed', 'invalid_definition', 'timeout', 'worker_lost', 'internal_error', 'expectation_failed', 'element_not_found', 'http_error');

-- CreateEnum
CREATE TYPE "SkipReason" AS ENUM ('test_disabled');

-- CreateEnum
CREATE TYPE "StepOutcome" AS ENUM ('passed', 'failed', 'error', 'skipped');

-- CreateEnum
CREATE TYPE "StepAction" AS ENUM ('goto', 'click', 'fill', 'press', 'select', 'check', 'uncheck', 'hover', 'waitFor', 'expectText', 'expectVisible', 'expectHidden', 'expectUrl', 'expectTitle', 'screenshot', 'wait');

-- AlterTable
ALTER TABLE "runs"
    ALTER COLUMN "outcome_code" TYPE "RunOutcomeCode" USING "outcome_code"::"RunOutcomeCode",
    ALTER COLUMN "skip_reason" TYPE "SkipReason" USING "skip_reason"::"SkipReason";

-- AlterTable
ALTER TABLE "step_results"
    ALTER COLUMN "action" TYPE "StepAction" USING "action"::"StepAction",
    ALTER COLUMN "outcome" TYPE "StepOutcome" USING "outcome"::"StepOutcome";

-- An error code only on an `error` run, a failure code only on a `failed` one (the API reads the
-- code of an `error` run as the wire's RunErrorCode); a skip reason only on a `skipped` run.
-- Prisma's schema cannot state CHECK constraints; `prisma migrate` keeps them as they are.
ALTER TABLE "runs" ADD CONSTRAINT "runs_outcome_code_matches_status" CHECK (
    "outcome_code" IS NULL
    OR ("status" = 'error' AND "outcome_code" IN ('target_unreachable', 'browser_crashed', 'invalid_definition', 'timeout', 'worker_lost', 'internal_error'))
    OR ("status" = 'failed' AND "outcome_code" IN ('expectation_failed', 'element_not_found', 'http_error'))
);
ALTER TABLE "runs" ADD CONSTRAINT "runs_skip_reason_matches_status" CHECK ("skip_reason" IS NULL OR "status" = 'skipped');

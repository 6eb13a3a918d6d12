-- View links carry an expiry and a version: bumping a suite run's version revokes every link to it
-- and to its runs.

-- AlterTable
ALTER TABLE "suite_runs" ADD COLUMN "view_token_version" INTEGER NOT NULL DEFAULT 0;

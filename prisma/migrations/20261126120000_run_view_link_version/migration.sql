-- A run outside a suite run has a view link version of its own: bumping it revokes every link to
-- the run. A run in a suite run signs its suite run's version instead.

-- AlterTable
ALTER TABLE "runs" ADD COLUMN "view_token_version" INTEGER NOT NULL DEFAULT 0;

-- What a run and a suite run were enqueued behind, and whether they run a version that was not the
-- project's active one, recorded when they are created: after the fact neither can be read back
-- (the workspace's line has moved on; a deployment keeps only its last activation).
-- `queued_ahead`: the workspace's runs queued or running ahead of it when it was enqueued (its place
-- in the workspace's line, docs/WORKER.md "Fair sharing between workspaces", less one; for a suite
-- run, the runs ahead of its first run). Null for rows from before it was recorded and for runs
-- created skipped.
-- `preview`: the deployment it executes was not the project's active one when it was enqueued (a
-- preview, or an older version named by its id). Null for rows from before it was recorded and for
-- runs of no deployment.
-- AlterTable
ALTER TABLE "runs" ADD COLUMN "queued_ahead" INTEGER,
ADD COLUMN "preview" BOOLEAN;

-- AlterTable
ALTER TABLE "suite_runs" ADD COLUMN "queued_ahead" INTEGER,
ADD COLUMN "preview" BOOLEAN;

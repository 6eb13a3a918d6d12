-- Listings (GET /api/v1/runs and /api/v1/suite-runs): newest first, filtered by project, suite, test
-- or status, paged by a (created_at, id) cursor. Each filter gets an index whose order is the
-- listing's, so a page reads about `limit` index entries however many runs the workspace holds.

-- A run's suite and a suite run's project, written when they are created (a test never changes
-- suite: moving it in the project file archives it and creates another), so that filtering by them
-- needs no join.
ALTER TABLE "runs" ADD COLUMN "suite_id" TEXT;
UPDATE "runs" r SET "suite_id" = t."suite_id" FROM "tests" t WHERE t."id" = r."test_id";
ALTER TABLE "runs" ALTER COLUMN "suite_id" SET NOT NULL;

ALTER TABLE "suite_runs" ADD COLUMN "project_id" TEXT;
UPDATE "suite_runs" s SET "project_id" = su."project_id" FROM "suites" su WHERE su."id" = s."suite_id";
ALTER TABLE "suite_runs" ALTER COLUMN "project_id" SET NOT NULL;

-- The (workspace, created_at) and (workspace, status) indexes gain the listing's order; the test
-- index keeps serving the foreign key.
DROP INDEX "runs_workspace_id_created_at_idx";
CREATE INDEX "runs_workspace_id_created_at_id_idx" ON "runs"("workspace_id", "created_at", "id");
DROP INDEX "runs_workspace_id_status_idx";
CREATE INDEX "runs_workspace_id_status_created_at_id_idx" ON "runs"("workspace_id", "status", "created_at", "id");
DROP INDEX "runs_test_id_idx";
CREATE INDEX "runs_test_id_created_at_id_idx" ON "runs"("test_id", "created_at", "id");
CREATE INDEX "runs_project_id_created_at_id_idx" ON "runs"("project_id", "created_at", "id");
CREATE INDEX "runs_suite_id_created_at_id_idx" ON "runs"("suite_id", "created_at", "id");

DROP INDEX "suite_runs_workspace_id_created_at_idx";
CREATE INDEX "suite_runs_workspace_id_created_at_id_idx" ON "suite_runs"("workspace_id", "created_at", "id");
CREATE INDEX "suite_runs_workspace_id_status_created_at_id_idx" ON "suite_runs"("workspace_id", "status", "created_at", "id");
CREATE INDEX "suite_runs_suite_id_created_at_id_idx" ON "suite_runs"("suite_id", "created_at", "id");
CREATE INDEX "suite_runs_project_id_created_at_id_idx" ON "suite_runs"("project_id", "created_at", "id");

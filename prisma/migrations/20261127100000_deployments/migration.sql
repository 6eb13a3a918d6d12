-- Deployments: every version of a project's test definitions, stored when it is deployed (over the
-- API, or by `testrun admin project apply`). One version per project is active: the live suites and
-- tests rows are its projection. A run and a suite run name the deployment they executed.

-- CreateTable
CREATE TABLE "deployments" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "document" JSONB NOT NULL,
    "created_by_key_id" TEXT,
    "created_by_key_name" TEXT,
    "changes" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "activated_at" TIMESTAMPTZ(3),

    CONSTRAINT "deployments_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "deployments_version_positive" CHECK ("version" >= 1)
);

-- CreateTable
CREATE TABLE "deployment_tests" (
    "deployment_id" TEXT NOT NULL,
    "test_id" TEXT NOT NULL,
    "suite_id" TEXT NOT NULL,
    "suite_slug" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "enabled" BOOLEAN NOT NULL,
    "position" INTEGER NOT NULL,
    "steps" JSONB NOT NULL,
    "timeout_ms" INTEGER NOT NULL,
    "evidence" JSONB,
    "retries" INTEGER NOT NULL,

    CONSTRAINT "deployment_tests_pkey" PRIMARY KEY ("deployment_id","test_id")
);

-- AlterTable
ALTER TABLE "projects" ADD COLUMN "active_deployment_id" TEXT;
ALTER TABLE "runs" ADD COLUMN "deployment_id" TEXT;
ALTER TABLE "suite_runs" ADD COLUMN "deployment_id" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "deployments_project_id_version_key" ON "deployments"("project_id", "version");
CREATE INDEX "deployments_project_id_created_at_id_idx" ON "deployments"("project_id", "created_at", "id");
CREATE INDEX "deployments_workspace_id_idx" ON "deployments"("workspace_id");
CREATE UNIQUE INDEX "projects_active_deployment_id_key" ON "projects"("active_deployment_id");
CREATE INDEX "deployment_tests_test_id_idx" ON "deployment_tests"("test_id");
CREATE INDEX "runs_deployment_id_idx" ON "runs"("deployment_id");
CREATE INDEX "suite_runs_deployment_id_idx" ON "suite_runs"("deployment_id");

-- AddForeignKey
ALTER TABLE "deployments" ADD CONSTRAINT "deployments_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "deployments" ADD CONSTRAINT "deployments_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "deployment_tests" ADD CONSTRAINT "deployment_tests_deployment_id_fkey" FOREIGN KEY ("deployment_id") REFERENCES "deployments"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "deployment_tests" ADD CONSTRAINT "deployment_tests_test_id_fkey" FOREIGN KEY ("test_id") REFERENCES "tests"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "deployment_tests" ADD CONSTRAINT "deployment_tests_suite_id_fkey" FOREIGN KEY ("suite_id") REFERENCES "suites"("id") ON DELETE CASCADE ON UPDATE CASCADE;
-- The active deployment is never deleted while it is active (pruning skips it).
ALTER TABLE "projects" ADD CONSTRAINT "projects_active_deployment_id_fkey" FOREIGN KEY ("active_deployment_id") REFERENCES "deployments"("id") ON DELETE SET NULL ON UPDATE CASCADE;
-- NO ACTION: a deployment a run or suite run still names cannot be deleted (pruning deletes only
-- unreferenced ones); deleting a workspace or project removes its runs in the same statement.
ALTER TABLE "runs" ADD CONSTRAINT "runs_deployment_id_fkey" FOREIGN KEY ("deployment_id") REFERENCES "deployments"("id") ON DELETE NO ACTION ON UPDATE CASCADE;
ALTER TABLE "suite_runs" ADD CONSTRAINT "suite_runs_deployment_id_fkey" FOREIGN KEY ("deployment_id") REFERENCES "deployments"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

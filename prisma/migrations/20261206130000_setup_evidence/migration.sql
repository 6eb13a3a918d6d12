-- Setup tests keep their evidence, and a run outside a suite run keeps its setup tests
-- (docs/PLAYWRIGHT.md, "Setup projects").

-- A setup test's entry belongs to its suite run, or, for a run outside a suite run, to that run.
ALTER TABLE "setup_results" ALTER COLUMN "suite_run_id" DROP NOT NULL;
ALTER TABLE "setup_results" ADD COLUMN "run_id" TEXT;
-- The execution the entry shows (a new one for each execution recorded): its evidence is the one kept.
ALTER TABLE "setup_results" ADD COLUMN "execution_id" TEXT;
ALTER TABLE "setup_results" ADD CONSTRAINT "setup_results_owner_check" CHECK (("suite_run_id" IS NULL) <> ("run_id" IS NULL));
CREATE UNIQUE INDEX "setup_results_run_id_key_key" ON "setup_results"("run_id", "key");
ALTER TABLE "setup_results" ADD CONSTRAINT "setup_results_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The screenshot, trace, video and attachments of a setup test's shown execution. Its files are
-- stored under the run whose sandbox ran it (`run_id`, the store's `<workspace>/<run>/` prefix), so
-- retention deletes them with that run's files, and the rows go with the run or the entry.
CREATE TABLE "setup_artifacts" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "setup_result_id" TEXT NOT NULL,
    "run_id" TEXT NOT NULL,
    "execution_id" TEXT NOT NULL,
    "kind" "ArtifactKind" NOT NULL,
    "name" TEXT NOT NULL,
    "storage_key" TEXT NOT NULL,
    "content_type" TEXT NOT NULL,
    "size_bytes" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "setup_artifacts_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "setup_artifacts_setup_result_id_idx" ON "setup_artifacts"("setup_result_id");
CREATE INDEX "setup_artifacts_run_id_idx" ON "setup_artifacts"("run_id");
CREATE INDEX "setup_artifacts_workspace_id_created_at_idx" ON "setup_artifacts"("workspace_id", "created_at");
ALTER TABLE "setup_artifacts" ADD CONSTRAINT "setup_artifacts_setup_result_id_fkey" FOREIGN KEY ("setup_result_id") REFERENCES "setup_results"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "setup_artifacts" ADD CONSTRAINT "setup_artifacts_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

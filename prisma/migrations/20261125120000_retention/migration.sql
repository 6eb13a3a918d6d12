-- Retention: artifacts expire after ARTIFACT_RETENTION_DAYS and runs after RUN_RETENTION_DAYS; the
-- reconciler deletes what expired in bounded batches (apps/worker/src/retention.ts).

-- AlterTable: a workspace's own retention in days, or null for the deployment's default.
ALTER TABLE "workspaces" ADD COLUMN "artifact_retention_days" INTEGER;
ALTER TABLE "workspaces" ADD COLUMN "run_retention_days" INTEGER;
ALTER TABLE "workspaces" ADD CONSTRAINT "workspaces_retention_days_positive" CHECK (
    ("artifact_retention_days" IS NULL OR "artifact_retention_days" BETWEEN 1 AND 36500)
    AND ("run_retention_days" IS NULL OR "run_retention_days" BETWEEN 1 AND 36500)
);

-- AlterTable: when the run's artifact files and rows were deleted; the view shows "expired" there.
ALTER TABLE "runs" ADD COLUMN "artifacts_expired_at" TIMESTAMPTZ(3);

-- CreateIndex: the oldest artifacts of a workspace, read by each expiry batch.
CREATE INDEX "artifacts_workspace_id_created_at_idx" ON "artifacts"("workspace_id", "created_at");

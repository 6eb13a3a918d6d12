-- Visual comparison (docs/VISUAL.md): the baselines the service keeps for `toHaveScreenshot` and
-- `toMatchSnapshot`, per deployment, with their history, and what each run found new or changed.

-- A snapshot that differs from its baseline fails its run with a code of its own.
ALTER TYPE "RunOutcomeCode" ADD VALUE 'screenshot_changed';
ALTER TABLE "runs" DROP CONSTRAINT "runs_outcome_code_matches_status";
ALTER TABLE "runs" ADD CONSTRAINT "runs_outcome_code_matches_status" CHECK (
    "outcome_code" IS NULL
    OR ("status" = 'error' AND "outcome_code"::text IN ('target_unreachable', 'browser_crashed', 'invalid_definition', 'timeout', 'worker_lost', 'internal_error', 'resource_limit', 'target_blocked', 'cancelled', 'test_code_error', 'setup_failed'))
    OR ("status" = 'failed' AND "outcome_code"::text IN ('expectation_failed', 'element_not_found', 'http_error', 'unexpected_pass', 'screenshot_changed'))
);

-- A deployment's current baseline of one snapshot, by its path in the bundle (where Playwright's
-- snapshotPathTemplate puts it). A run of the deployment compares against the deployment's own
-- baseline of a path, else the project's active deployment's; activating a deployment copies in
-- the active one's baselines it lacks, so every version once active keeps its whole set. The image
-- is stored once per workspace by its SHA-256 (`<workspace>/baselines/<sha256>`).
CREATE TABLE "baselines" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "deployment_id" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "sha256" TEXT NOT NULL,
    "storage_key" TEXT NOT NULL,
    "content_type" TEXT NOT NULL,
    "size_bytes" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "run_id" TEXT,
    "approved_by_key_id" TEXT,
    "approved_by_key_name" TEXT,
    "approved_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "baselines_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "baselines_status_check" CHECK ("status" IN ('new', 'approved'))
);
CREATE UNIQUE INDEX "baselines_deployment_id_path_key" ON "baselines"("deployment_id", "path");
CREATE INDEX "baselines_project_id_idx" ON "baselines"("project_id");
CREATE INDEX "baselines_workspace_id_sha256_idx" ON "baselines"("workspace_id", "sha256");
ALTER TABLE "baselines" ADD CONSTRAINT "baselines_deployment_id_fkey" FOREIGN KEY ("deployment_id") REFERENCES "deployments"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "baselines" ADD CONSTRAINT "baselines_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "baselines" ADD CONSTRAINT "baselines_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- What a baseline was before each change of it: the image, where it came from, who approved it.
CREATE TABLE "baseline_history" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "deployment_id" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "sha256" TEXT NOT NULL,
    "storage_key" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "run_id" TEXT,
    "approved_by_key_name" TEXT,
    "approved_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "replaced_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "baseline_history_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "baseline_history_deployment_id_path_idx" ON "baseline_history"("deployment_id", "path");
ALTER TABLE "baseline_history" ADD CONSTRAINT "baseline_history_deployment_id_fkey" FOREIGN KEY ("deployment_id") REFERENCES "deployments"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A snapshot a run found without a baseline (`new`: it became the deployment's baseline, awaiting
-- approval) or different from it (`changed`: the image it took, which approving makes the baseline).
CREATE TABLE "visual_changes" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "run_id" TEXT NOT NULL,
    "deployment_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "sha256" TEXT NOT NULL,
    "storage_key" TEXT NOT NULL,
    "content_type" TEXT NOT NULL,
    "size_bytes" INTEGER NOT NULL,
    "approved_by_key_id" TEXT,
    "approved_by_key_name" TEXT,
    "approved_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "visual_changes_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "visual_changes_kind_check" CHECK ("kind" IN ('new', 'changed'))
);
CREATE UNIQUE INDEX "visual_changes_run_id_path_key" ON "visual_changes"("run_id", "path");
ALTER TABLE "visual_changes" ADD CONSTRAINT "visual_changes_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "visual_changes" ADD CONSTRAINT "visual_changes_deployment_id_fkey" FOREIGN KEY ("deployment_id") REFERENCES "deployments"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The setup tests a suite run's Playwright tests depended on (docs/PLAYWRIGHT.md, "Setup projects"):
-- one row per setup test per suite run, whatever the number of sandboxes that ran it. It is not a
-- run of the suite run: it counts in none of its counters.
CREATE TABLE "setup_results" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "suite_run_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "location" JSONB NOT NULL,
    "status" "RunStatus" NOT NULL,
    "outcome_code" "RunOutcomeCode",
    "outcome_message" TEXT,
    "result_summary" TEXT NOT NULL,
    "failure" JSONB,
    "steps" JSONB NOT NULL,
    "duration_ms" INTEGER NOT NULL,
    "executions" INTEGER NOT NULL DEFAULT 1,
    "failed_executions" INTEGER NOT NULL DEFAULT 0,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "finished_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "setup_results_pkey" PRIMARY KEY ("id"),
    -- Recorded once ended: the four terminal statuses only.
    CONSTRAINT "setup_results_status_check" CHECK ("status" IN ('passed', 'failed', 'error', 'skipped'))
);
CREATE UNIQUE INDEX "setup_results_suite_run_id_key_key" ON "setup_results"("suite_run_id", "key");
CREATE INDEX "setup_results_workspace_id_idx" ON "setup_results"("workspace_id");
ALTER TABLE "setup_results" ADD CONSTRAINT "setup_results_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "setup_results" ADD CONSTRAINT "setup_results_suite_run_id_fkey" FOREIGN KEY ("suite_run_id") REFERENCES "suite_runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

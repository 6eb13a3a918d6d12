-- Retries: a test may be attempted again after a failed or error attempt, up to `retries` times
-- (0..3), set per test in the project file and per request. Each test attempt is an execution of
-- its own (`runs.attempt`, which keys step_results and artifacts), so every attempt keeps its own
-- steps and evidence; `runs.retry` says which test attempt the current execution is (0 = the first).
-- A run that passed with `retry` > 0 is flaky.

-- AlterTable
ALTER TABLE "tests" ADD COLUMN "retries" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "tests" ADD CONSTRAINT "tests_retries_range" CHECK ("retries" BETWEEN 0 AND 3);

-- AlterTable
ALTER TABLE "runs" ADD COLUMN "retries" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "runs" ADD COLUMN "retry" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "runs" ADD CONSTRAINT "runs_retries_range" CHECK ("retries" BETWEEN 0 AND 3 AND "retry" BETWEEN 0 AND "retries");

-- The flaky children of a suite run (passed with retry > 0) are counted through this index: only
-- retried runs are read, whatever the size of the suite.
CREATE INDEX "runs_suite_run_id_retry_idx" ON "runs"("suite_run_id", "retry");

-- CreateTable: the test attempts of a run that were retried (the last attempt is the run itself).
CREATE TABLE "run_attempts" (
    "run_id" TEXT NOT NULL,
    "retry" INTEGER NOT NULL,
    "attempt" INTEGER NOT NULL,
    "status" "RunStatus" NOT NULL,
    "result_summary" TEXT NOT NULL,
    "outcome_code" "RunOutcomeCode",
    "outcome_message" TEXT,
    "outcome_step" INTEGER,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "finished_at" TIMESTAMPTZ(3) NOT NULL,
    "duration_ms" INTEGER NOT NULL,

    CONSTRAINT "run_attempts_pkey" PRIMARY KEY ("run_id", "retry"),
    CONSTRAINT "run_attempts_retried_status" CHECK ("status" IN ('failed', 'error'))
);

-- AddForeignKey
ALTER TABLE "run_attempts" ADD CONSTRAINT "run_attempts_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A worker holds the runs it is running (docs/WORKER.md, "The reconciler"): its claim sets
-- `held_until` and the worker renews it while the run lasts. When Redis loses a running run's job
-- (flushed, or restarted empty) while its worker is alive and still running it, the reconciler
-- leaves the run to that worker instead of giving it a new job, whose claim would take the run over
-- (or, on its last attempt, end it `worker_lost`).
-- AlterTable
ALTER TABLE "runs" ADD COLUMN "held_until" TIMESTAMPTZ(3);

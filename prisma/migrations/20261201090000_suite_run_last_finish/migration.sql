-- A suite run spans its runs, from the first start to the last finish (docs/API.md). Concurrent
-- transactions write their runs' times in an order the suite run's row lock does not follow (a
-- transaction's now() is when it began, not when it took the lock), so the suite run keeps the
-- latest finish among its runs so far and takes its own finish from it when it ends.
-- AlterTable
ALTER TABLE "suite_runs" ADD COLUMN "last_run_finished_at" TIMESTAMPTZ(3);

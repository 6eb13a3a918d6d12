-- The kind of a run's test is a column of its own (docs/ARCHITECTURE.md, "Executors"): the worker
-- picks the run's executor by it, not by the shape of its definition. A run created before it has
-- the kind its definition shows: an object naming a Playwright test, else a list of steps.
ALTER TABLE "runs" ADD COLUMN "kind" TEXT NOT NULL DEFAULT 'steps';
UPDATE "runs" SET "kind" = 'playwright' WHERE jsonb_typeof("steps") = 'object' AND "steps" ? 'playwright';

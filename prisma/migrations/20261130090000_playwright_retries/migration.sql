-- Playwright retries (docs/PLAYWRIGHT.md, "What of your config applies"): the tries a team's
-- Playwright config makes within one execution are attempts of the run, like the service's retries:
-- each earlier try is a `run_attempts` row under an execution number of its own, and `runs.retry`
-- counts it. Those retries are the config's, not `runs.retries` (the service's allowance, 0..3), so
-- `retry` may now go past `retries`.
ALTER TABLE "runs" DROP CONSTRAINT "runs_retries_range";
ALTER TABLE "runs" ADD CONSTRAINT "runs_retries_range" CHECK ("retries" BETWEEN 0 AND 3 AND "retry" >= 0);

-- Whether the request that created the run gave `retries` (0 included). A request's `retries: 0`
-- then turns a Playwright config's retries off, where a request that gives none leaves them on;
-- `runs.retries` is 0 in both cases.
-- AlterTable
ALTER TABLE "runs" ADD COLUMN "retries_requested" BOOLEAN NOT NULL DEFAULT false;
